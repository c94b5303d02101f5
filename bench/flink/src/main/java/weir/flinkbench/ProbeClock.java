package weir.flinkbench;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The time line of one latency run, shared by the source readers, the sink writers and {@link
 * LatencyMain} through static state (the MiniCluster runs in this JVM, as for {@link Phase}).
 * The run starts when the job's tasks start (the first source reader that gets its split or
 * sink writer that opens), so that JVM and MiniCluster start-up fall outside the warm-up; records emitted from start + warm-up on are measured, and the
 * sources end at start + warm-up + duration. Times are System.nanoTime values.
 */
final class ProbeClock {
  private ProbeClock() {}

  private static final AtomicLong start = new AtomicLong(Long.MIN_VALUE);
  private static volatile long warmupNs;
  private static volatile long durationNs;

  /** Prepares a run; call before the job is submitted. */
  static void reset(long warmupNanos, long durationNanos) {
    warmupNs = warmupNanos;
    durationNs = durationNanos;
    start.set(Long.MIN_VALUE);
  }

  /** The run's start, set by the first caller. */
  static long started() {
    start.compareAndSet(Long.MIN_VALUE, System.nanoTime());
    return start.get();
  }

  /** Whether a reader has started the run. */
  static boolean hasStarted() {
    return start.get() != Long.MIN_VALUE;
  }

  /** The first emit time that is measured. */
  static long measureFrom() {
    return started() + warmupNs;
  }

  /** When the sources end. */
  static long deadline() {
    return started() + warmupNs + durationNs;
  }
}
