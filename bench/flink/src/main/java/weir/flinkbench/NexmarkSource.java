package weir.flinkbench;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.beam.sdk.nexmark.sources.generator.GeneratorConfig;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.connector.source.lib.util.IteratorSourceEnumerator;
import org.apache.flink.api.connector.source.lib.util.IteratorSourceReader;
import org.apache.flink.api.connector.source.lib.util.IteratorSourceSplit;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.table.data.RowData;

/**
 * A bounded, parallel, checkpointable Flink source of Nexmark events.
 *
 * <p>The events are split into {@code numGenerators} Beam generators; split {@code s} of {@code
 * n} (one split per source subtask) runs the generators {@code k} with {@code k mod n == s},
 * taking one event from each in turn, so each split's events are in timestamp order and the
 * whole event set does not depend on the parallelism. This is how weir's nexmark.Source reads
 * them. A split's checkpointed state is the next index of each of its generators.
 */
final class NexmarkSource implements Source<RowData, NexmarkSource.Split, Collection<NexmarkSource.Split>> {
  private static final long serialVersionUID = 1L;

  private final long numEvents;
  private final int numGenerators;
  private final int numSplits;

  NexmarkSource(long numEvents, int numGenerators, int numSplits) {
    this.numEvents = numEvents;
    this.numGenerators = numGenerators;
    this.numSplits = numSplits;
  }

  @Override
  public Boundedness getBoundedness() {
    return Boundedness.BOUNDED;
  }

  @Override
  public SourceReader<RowData, Split> createReader(SourceReaderContext ctx) {
    return new IteratorSourceReader<>(ctx);
  }

  @Override
  public SplitEnumerator<Split, Collection<Split>> createEnumerator(SplitEnumeratorContext<Split> ctx) {
    int gens = NexmarkEvents.generators(numEvents, numGenerators).size();
    List<Split> splits = new ArrayList<>();
    for (int s = 0; s < numSplits; s++) {
      int mine = 0;
      for (int k = s; k < gens; k += numSplits) {
        mine++;
      }
      if (mine > 0) {
        splits.add(new Split(numEvents, numGenerators, s, numSplits, new long[mine], 0));
      }
    }
    return new IteratorSourceEnumerator<>(ctx, splits);
  }

  @Override
  public SplitEnumerator<Split, Collection<Split>> restoreEnumerator(
      SplitEnumeratorContext<Split> ctx, Collection<Split> state) {
    return new IteratorSourceEnumerator<>(ctx, state);
  }

  @Override
  public SimpleVersionedSerializer<Split> getSplitSerializer() {
    return SplitSerializers.of(Split::write, Split::read);
  }

  @Override
  public SimpleVersionedSerializer<Collection<Split>> getEnumeratorCheckpointSerializer() {
    return SplitSerializers.ofAll(Split::write, Split::read);
  }

  /** Split s of n: its generators and the next index of each. */
  static final class Split implements IteratorSourceSplit<RowData, SplitIterator> {
    final long numEvents;
    final int numGenerators;
    final int index;
    final int count;
    final long[] next;
    final int turn;

    Split(long numEvents, int numGenerators, int index, int count, long[] next, int turn) {
      this.numEvents = numEvents;
      this.numGenerators = numGenerators;
      this.index = index;
      this.count = count;
      this.next = next;
      this.turn = turn;
    }

    @Override
    public String splitId() {
      return Integer.toString(index);
    }

    static void write(DataOutputStream out, Split s) throws IOException {
      out.writeLong(s.numEvents);
      out.writeInt(s.numGenerators);
      out.writeInt(s.index);
      out.writeInt(s.count);
      out.writeInt(s.turn);
      out.writeInt(s.next.length);
      for (long v : s.next) {
        out.writeLong(v);
      }
    }

    static Split read(DataInputStream in) throws IOException {
      long numEvents = in.readLong();
      int numGenerators = in.readInt();
      int index = in.readInt();
      int count = in.readInt();
      int turn = in.readInt();
      long[] next = new long[in.readInt()];
      for (int i = 0; i < next.length; i++) {
        next[i] = in.readLong();
      }
      return new Split(numEvents, numGenerators, index, count, next, turn);
    }

    @Override
    public SplitIterator getIterator() {
      List<GeneratorConfig> all = NexmarkEvents.generators(numEvents, numGenerators);
      List<GeneratorConfig> mine = new ArrayList<>();
      for (int k = index; k < all.size(); k += count) {
        mine.add(all.get(k));
      }
      if (mine.size() != next.length) {
        throw new IllegalStateException("split " + index + " of " + count + " has " + next.length
            + " positions for " + mine.size() + " generators");
      }
      return new SplitIterator(mine.toArray(new GeneratorConfig[0]), next.clone(), turn);
    }

    @Override
    public IteratorSourceSplit<RowData, SplitIterator> getUpdatedSplitForIterator(SplitIterator it) {
      return new Split(numEvents, numGenerators, index, count, it.next.clone(), it.turn);
    }
  }

  /** Takes one event from each generator in turn until all are exhausted. */
  static final class SplitIterator implements Iterator<RowData> {
    final GeneratorConfig[] gens;
    final long[] next;
    final long[] max;
    int turn;
    long remaining;
    int unreported;

    SplitIterator(GeneratorConfig[] gens, long[] next, int turn) {
      this.gens = gens;
      this.next = next;
      this.turn = turn;
      this.max = new long[gens.length];
      for (int k = 0; k < gens.length; k++) {
        max[k] = gens[k].maxEvents;
        remaining += Math.max(0, max[k] - next[k]);
      }
    }

    @Override
    public boolean hasNext() {
      if (remaining > 0) {
        return true;
      }
      if (unreported > 0) {
        Phase.emitted(unreported);
        unreported = 0;
      }
      return false;
    }

    @Override
    public RowData next() {
      if (remaining <= 0) {
        throw new NoSuchElementException();
      }
      while (true) {
        int k = turn;
        if (++turn == gens.length) {
          turn = 0;
        }
        if (next[k] < max[k]) {
          remaining--;
          if (++unreported == Phase.REPORT_EVERY) {
            Phase.emitted(unreported);
            unreported = 0;
          }
          return NexmarkEvents.eventAt(gens[k], next[k]++);
        }
      }
    }
  }
}
