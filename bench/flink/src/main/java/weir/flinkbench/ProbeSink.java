package weir.flinkbench;

import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;

/**
 * The latency benchmark's sink, as weir's probe sink without a two-phase commit: each writer
 * records now minus the emit time of every record emitted at or after {@link
 * ProbeClock#measureFrom} in its own {@link LatencyHistogram}; the records go nowhere. The
 * histograms are registered in static state (the MiniCluster runs in this JVM) and merged by
 * {@link #histogram} after the job has ended.
 */
final class ProbeSink implements Sink<ProbeEvent> {
  private static final long serialVersionUID = 1L;

  private static final ConcurrentLinkedQueue<LatencyHistogram> all = new ConcurrentLinkedQueue<>();

  /** Forgets the histograms of an earlier run. */
  static void reset() {
    all.clear();
  }

  /** The writers' histograms merged; call after the job ended. */
  static LatencyHistogram histogram() {
    LatencyHistogram h = new LatencyHistogram();
    for (LatencyHistogram w : all) {
      h.merge(w);
    }
    return h;
  }

  @Override
  public SinkWriter<ProbeEvent> createWriter(WriterInitContext context) {
    LatencyHistogram h = new LatencyHistogram();
    all.add(h);
    return new Writer(h, ProbeClock.measureFrom());
  }

  static final class Writer implements SinkWriter<ProbeEvent> {
    private final LatencyHistogram h;
    private final long from;

    Writer(LatencyHistogram h, long from) {
      this.h = h;
      this.from = from;
    }

    @Override
    public void write(ProbeEvent e, Context context) {
      if (e.emit - from >= 0) {
        h.record(System.nanoTime() - e.emit);
      }
    }

    @Override
    public void flush(boolean endOfInput) {}

    @Override
    public void close() {}
  }
}
