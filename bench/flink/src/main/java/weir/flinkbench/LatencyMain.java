package weir.flinkbench;

import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * The latency benchmark of {@code weir bench latency} on a local Flink MiniCluster: the same
 * pipeline (a rate-scheduled source stamping each record with its due time, a key-by over
 * {@code --keys} keys, a per-key count in keyed state, a sink recording now minus the stamp in a
 * histogram of the same bucket scheme), one run at {@code --rate} events/s over all source
 * subtasks, or unthrottled with {@code --rate 0} (the peak). Prints the report of {@code weir
 * bench latency --json} with that one run.
 *
 * <pre>
 * java -jar target/weir-flink-bench.jar latency --rate 1000000 [--duration 10s] [--warmup 2s]
 *     [--parallelism 2] [--keys 10000] [--checkpoint-interval 1s] [--buffer-timeout 100ms]
 * </pre>
 *
 * <p>Exactly-once aligned checkpoints every {@code --checkpoint-interval} (0: none), heap state
 * (the hashmap backend) and Flink's default checkpoint storage, the JobManager's memory, as weir
 * bench latency keeps its checkpoints in memory. {@code --buffer-timeout} is Flink's
 * execution.buffer-timeout.interval, how long a partly filled network buffer may wait before it
 * is sent (Flink's default: 100ms).
 */
final class LatencyMain {
  private LatencyMain() {}

  static void main(String[] args) throws Exception {
    double rate = 0;
    Duration duration = Duration.ofSeconds(10);
    Duration warmup = Duration.ofSeconds(2);
    int parallelism = 2;
    long keys = 10_000;
    Duration interval = Duration.ofSeconds(1);
    Duration bufferTimeout = null;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (i + 1 >= args.length) {
        usage("missing value for " + a);
      }
      String v = args[++i];
      switch (a) {
        case "--rate": rate = Double.parseDouble(v); break;
        case "--duration": duration = Main.parseDuration(v); break;
        case "--warmup": warmup = Main.parseDuration(v); break;
        case "--parallelism": case "-p": parallelism = Integer.parseInt(v); break;
        case "--keys": keys = Long.parseLong(v); break;
        case "--checkpoint-interval": interval = Main.parseDuration(v); break;
        case "--buffer-timeout": bufferTimeout = Main.parseDuration(v); break;
        default: usage("unknown flag " + a);
      }
    }
    if (rate < 0 || duration.isZero() || duration.isNegative() || warmup.isNegative() || parallelism < 1
        || keys < 1 || interval.isNegative()) {
      usage("--rate, --warmup and --checkpoint-interval must not be negative, --duration, --parallelism and --keys must be positive");
    }
    Map<String, String> settings = new HashMap<>();
    settings.put("parallelism.default", Integer.toString(parallelism));
    settings.put("pipeline.object-reuse", "true");
    if (bufferTimeout != null) {
      settings.put("execution.buffer-timeout.interval", bufferTimeout.toMillis() + " ms");
    }
    if (!interval.isZero()) {
      settings.put("execution.checkpointing.interval", interval.toMillis() + " ms");
      settings.put("execution.checkpointing.mode", "EXACTLY_ONCE");
      settings.put("state.backend.type", "hashmap");
      settings.put("execution.checkpointing.checkpoints-after-tasks-finish", "false");
    }
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.createLocalEnvironment(parallelism, Configuration.fromMap(settings));
    env.fromSource(new ProbeSource(rate, keys, parallelism), WatermarkStrategy.noWatermarks(), "source")
        .keyBy(e -> e.key)
        .process(new Count())
        .name("count")
        .sinkTo(new ProbeSink())
        .name("sink");

    ProbeClock.reset(warmup.toNanos(), duration.toNanos());
    ProbeSink.reset();
    env.execute("weir-flink-bench latency");
    LatencyHistogram h = ProbeSink.histogram();
    if (h.n == 0) {
      System.err.println("weir-flink-bench: no records were measured: none emitted after the warm-up was due before the end"
          + " (a rate too low for --duration, or a pipeline more than --duration behind its schedule)");
      System.exit(1);
    }
    // As weir's: the records measured (emitted after the warm-up, before the sources' end)
    // over the measured phase.
    double measured = h.n / (duration.toNanos() / 1e9);
    String checkpoints = interval.isZero() ? "none" : "aligned";
    System.out.printf(Locale.ROOT,
        "{\"engine\": \"flink\", \"parallelism\": %d, \"checkpoints\": \"%s\", \"checkpoint_interval_ms\": %d,"
            + " \"two_phase_commit\": false, \"duration_s\": %s, \"warmup_s\": %s,%s \"runs\": [{\"peak_fraction\": %s,"
            + " \"target_rate\": %s, \"rate\": %s, \"records\": %d, \"p50_ms\": %s, \"p99_ms\": %s, \"p99_9_ms\": %s,"
            + " \"max_ms\": %s}]}%n",
        parallelism, checkpoints, interval.toMillis(), duration.toMillis() / 1e3, warmup.toMillis() / 1e3,
        rate == 0 ? String.format(Locale.ROOT, " \"peak_rate\": %s,", measured) : "", rate == 0 ? "1" : "0",
        rate, measured, h.n, h.quantile(0.5) / 1e6, h.quantile(0.99) / 1e6, h.quantile(0.999) / 1e6, h.max / 1e6);
    System.exit(0);
  }

  private static void usage(String message) {
    System.err.println("weir-flink-bench latency: " + message);
    System.err.println("usage: java -jar weir-flink-bench.jar latency --rate EVENTS_PER_S [--duration 10s]"
        + " [--warmup 2s] [--parallelism 2] [--keys 10000] [--checkpoint-interval 1s] [--buffer-timeout 100ms]");
    System.exit(2);
  }

  /** Counts the records of each key in keyed state and emits each with its key's count so far. */
  static final class Count extends KeyedProcessFunction<Long, ProbeEvent, ProbeEvent> {
    private static final long serialVersionUID = 1L;
    private transient ValueState<Long> count;

    @Override
    public void open(org.apache.flink.api.common.functions.OpenContext ctx) {
      count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Long.class));
    }

    @Override
    public void processElement(ProbeEvent e, Context ctx, Collector<ProbeEvent> out) throws Exception {
      Long n = count.value();
      long c = n == null ? 1 : n + 1;
      count.update(c);
      e.count = c;
      out.collect(e);
    }
  }
}
