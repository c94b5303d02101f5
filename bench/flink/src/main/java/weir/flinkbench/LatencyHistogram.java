package weir.flinkbench;

/**
 * A log-linear histogram of non-negative nanosecond values with the bucket scheme of weir's
 * latencyHist (cli/latency_hist.go), in the manner of HdrHistogram: values below 64 exactly,
 * larger ones in 32 sub-buckets per power of two (a relative error under 3.2%). One writer;
 * read after the writer is done.
 */
final class LatencyHistogram {
  static final int BUCKETS = 64 + 32 * 58;

  final long[] counts = new long[BUCKETS];
  long n;
  long max;

  static int index(long v) {
    if (v < 64) {
      return (int) Math.max(v, 0);
    }
    int shift = 64 - Long.numberOfLeadingZeros(v) - 6;
    return shift * 32 + (int) (v >>> shift);
  }

  /** The largest value of bucket i. */
  static long upper(int i) {
    if (i < 64) {
      return i;
    }
    int shift = i / 32 - 1;
    return (((long) (i % 32 + 32) + 1) << shift) - 1;
  }

  void record(long v) {
    counts[index(v)]++;
    n++;
    max = Math.max(max, v);
  }

  void merge(LatencyHistogram o) {
    for (int i = 0; i < BUCKETS; i++) {
      counts[i] += o.counts[i];
    }
    n += o.n;
    max = Math.max(max, o.max);
  }

  /** The value at quantile q: the upper bound of its bucket, but no more than the maximum. */
  long quantile(double q) {
    if (n == 0) {
      return 0;
    }
    long rank = Math.max((long) (q * n + 0.5), 1);
    long seen = 0;
    for (int i = 0; i < BUCKETS; i++) {
      seen += counts[i];
      if (seen >= rank) {
        return Math.min(upper(i), max);
      }
    }
    return max;
  }
}
