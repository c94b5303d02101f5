package weir.flinkbench;

import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The boundary between the warm-up and the measured phase of one run, shared by the source
 * readers and {@link Main} through static state: the MiniCluster runs in this JVM and the job's
 * classes come from the application class path, so the readers see the same class as Main.
 *
 * <p>Main calls {@link #reset} before it submits the job. Source readers call {@link #emitted}
 * with batches of their event count; once all readers together have emitted the warm-up count,
 * the first call past it records the wall clock and the process CPU time: the start of the
 * measured phase. One run per JVM at a time.
 */
final class Phase {
  private Phase() {}

  /** Readers report in batches of this many events, so the shared counter is cold. */
  static final int REPORT_EVERY = 1024;

  private static final AtomicLong emitted = new AtomicLong();
  private static volatile long warmup;
  private static volatile long startWallNs = -1;
  private static volatile long startCpuNs = -1;

  private static final com.sun.management.OperatingSystemMXBean OS =
      (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

  /** Starts a new run whose first {@code warmupEvents} events are the warm-up. */
  static void reset(long warmupEvents) {
    emitted.set(0);
    warmup = warmupEvents;
    startWallNs = -1;
    startCpuNs = -1;
    if (warmupEvents == 0) {
      mark();
    }
  }

  /** Adds n events emitted by one reader; marks the start when the warm-up is over. */
  static void emitted(long n) {
    long before = emitted.getAndAdd(n);
    if (before < warmup && before + n >= warmup) {
      mark();
    }
  }

  private static void mark() {
    startCpuNs = cpuNs();
    startWallNs = System.nanoTime();
  }

  /** Whether the measured phase has begun. */
  static boolean started() {
    return startWallNs >= 0;
  }

  static long startWallNs() {
    return startWallNs;
  }

  static long startCpuNs() {
    return startCpuNs;
  }

  /** Events the readers reported so far (in batches of {@link #REPORT_EVERY}). */
  static long emittedSoFar() {
    return emitted.get();
  }

  /** The CPU time of the whole JVM process (all threads: tasks, GC, JIT compiler). */
  static long cpuNs() {
    return OS.getProcessCpuTime();
  }
}
