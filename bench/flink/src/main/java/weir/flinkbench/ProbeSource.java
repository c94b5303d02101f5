package weir.flinkbench;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * The latency benchmark's source, as weir's probe source (cli/latency_probe.go): each of its
 * splits (one per subtask) emits {@link ProbeEvent}s until {@link ProbeClock#deadline}. With a
 * positive rate (events per second over all splits) record i of a split is due at the split's
 * start plus i/rate and is stamped with that time, not with the time it was emitted: a reader
 * held back by backpressure charges the wait to the records that waited (no coordinated
 * omission). When no record is due the reader is unavailable until the next one is. With rate 0
 * it emits as fast as it is polled, stamped when emitted. A split's state is its next index
 * and its start, so a restored reader keeps the schedule.
 */
final class ProbeSource implements Source<ProbeEvent, ProbeSource.Split, Collection<ProbeSource.Split>> {
  private static final long serialVersionUID = 1L;

  /** Most records one poll emits. */
  static final int BATCH = 1024;

  private final double rate;
  private final long keys;
  private final int splits;

  ProbeSource(double rate, long keys, int splits) {
    this.rate = rate;
    this.keys = keys;
    this.splits = splits;
  }

  @Override
  public Boundedness getBoundedness() {
    return Boundedness.BOUNDED;
  }

  @Override
  public SourceReader<ProbeEvent, Split> createReader(SourceReaderContext ctx) {
    return new Reader(ctx, rate / splits, keys);
  }

  @Override
  public SplitEnumerator<Split, Collection<Split>> createEnumerator(SplitEnumeratorContext<Split> ctx) {
    List<Split> all = new ArrayList<>();
    for (int s = 0; s < splits; s++) {
      all.add(new Split(s, 0, -1));
    }
    return new Enumerator(ctx, all);
  }

  @Override
  public SplitEnumerator<Split, Collection<Split>> restoreEnumerator(
      SplitEnumeratorContext<Split> ctx, Collection<Split> state) {
    return new Enumerator(ctx, state);
  }

  @Override
  public SimpleVersionedSerializer<Split> getSplitSerializer() {
    return SplitSerializers.of(Split::write, Split::read);
  }

  @Override
  public SimpleVersionedSerializer<Collection<Split>> getEnumeratorCheckpointSerializer() {
    return SplitSerializers.ofAll(Split::write, Split::read);
  }

  /** Split {@code index}: its next record and its schedule's start (System.nanoTime; -1: not started). */
  static final class Split implements SourceSplit {
    final int index;
    final long next;
    final long start;

    Split(int index, long next, long start) {
      this.index = index;
      this.next = next;
      this.start = start;
    }

    @Override
    public String splitId() {
      return Integer.toString(index);
    }

    static void write(DataOutputStream out, Split s) throws IOException {
      out.writeInt(s.index);
      out.writeLong(s.next);
      out.writeLong(s.start);
    }

    static Split read(DataInputStream in) throws IOException {
      return new Split(in.readInt(), in.readLong(), in.readLong());
    }
  }

  /** Emits the records of its split as they fall due. Called by the source task's mailbox thread. */
  static final class Reader implements SourceReader<ProbeEvent, Split> {
    private final double rate; // per split
    private final long keys;
    private final ScheduledExecutorService timer;
    private CompletableFuture<Void> available = new CompletableFuture<>();
    private int index = -1;
    private long next;
    private long start;
    private boolean noMoreSplits;
    private final SourceReaderContext ctx;

    Reader(SourceReaderContext ctx, double rate, long keys) {
      this.ctx = ctx;
      this.rate = rate;
      this.keys = keys;
      this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "probe-source-timer");
        t.setDaemon(true);
        return t;
      });
    }

    @Override
    public void start() {
      ctx.sendSplitRequest();
    }

    @Override
    public InputStatus pollNext(ReaderOutput<ProbeEvent> out) {
      if (index < 0) {
        return noMoreSplits ? InputStatus.END_OF_INPUT : unavailableUntilSignalled();
      }
      long now = System.nanoTime();
      if (now - ProbeClock.deadline() >= 0) {
        return InputStatus.END_OF_INPUT;
      }
      long n = BATCH;
      if (rate > 0) {
        long due = (long) ((now - start) / 1e9 * rate) + 1 - next;
        if (due <= 0) {
          long wait = start + (long) (next / rate * 1e9) - now;
          CompletableFuture<Void> f = new CompletableFuture<>();
          available = f;
          timer.schedule(() -> f.complete(null), Math.max(wait, 1000), TimeUnit.NANOSECONDS);
          return InputStatus.NOTHING_AVAILABLE;
        }
        n = Math.min(n, due);
      }
      for (long k = 0; k < n; k++) {
        long i = next + k;
        long stamp = rate > 0 ? start + (long) (i / rate * 1e9) : now;
        ProbeEvent e = new ProbeEvent();
        e.key = Long.remainderUnsigned(mix((long) index << 40 | i), keys);
        e.emit = stamp;
        out.collect(e);
      }
      next += n;
      return InputStatus.MORE_AVAILABLE;
    }

    private InputStatus unavailableUntilSignalled() {
      if (available.isDone()) {
        available = new CompletableFuture<>();
      }
      return InputStatus.NOTHING_AVAILABLE;
    }

    @Override
    public List<Split> snapshotState(long checkpointId) {
      return index < 0 ? List.of() : List.of(new Split(index, next, start));
    }

    @Override
    public CompletableFuture<Void> isAvailable() {
      return available;
    }

    @Override
    public void addSplits(List<Split> splits) {
      if (splits.size() != 1 || index >= 0) {
        throw new IllegalStateException("a probe reader reads one split, got " + splits.size() + " more");
      }
      Split s = splits.get(0);
      index = s.index;
      next = s.next;
      start = s.start >= 0 ? s.start : ProbeClock.started();
      available.complete(null);
    }

    @Override
    public void notifyNoMoreSplits() {
      noMoreSplits = true;
      available.complete(null);
    }

    @Override
    public void close() {
      timer.shutdownNow();
    }

    /** SplitMix64's finalizer: a key per record, spread evenly. */
    static long mix(long z) {
      z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
      z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
      return z ^ (z >>> 31);
    }
  }

  /** Hands each reader that asks one split, then no more. */
  static final class Enumerator implements SplitEnumerator<Split, Collection<Split>> {
    private final SplitEnumeratorContext<Split> ctx;
    private final ArrayDeque<Split> remaining;

    Enumerator(SplitEnumeratorContext<Split> ctx, Collection<Split> splits) {
      this.ctx = ctx;
      this.remaining = new ArrayDeque<>(splits);
    }

    @Override
    public void start() {}

    @Override
    public void handleSplitRequest(int subtask, String host) {
      Split s = remaining.poll();
      if (s != null) {
        ctx.assignSplit(s, subtask);
      }
      ctx.signalNoMoreSplits(subtask);
    }

    @Override
    public void addSplitsBack(List<Split> splits, int subtask) {
      remaining.addAll(splits);
    }

    @Override
    public void addReader(int subtask) {}

    @Override
    public Collection<Split> snapshotState(long checkpointId) {
      return new ArrayList<>(remaining);
    }

    @Override
    public void close() {}
  }
}
