package weir.flinkbench;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;

/**
 * Runs one Nexmark query on a local Flink MiniCluster and prints its throughput in the format of
 * {@code weir bench nexmark}.
 *
 * <pre>
 * java -jar target/weir-flink-bench.jar --query q5 --events 10000000 --parallelism 2
 *     [--checkpoint-interval 1s] [--warmup-events N] [--generators 100]
 * </pre>
 */
public final class Main {
  private Main() {}

  private static void usage(String message) {
    System.err.println("weir-flink-bench: " + message);
    System.err.println("usage: java -jar weir-flink-bench.jar --query qN --events N [--parallelism P]"
        + " [--checkpoint-interval DURATION] [--warmup-events N] [--generators G]");
    System.err.println("queries: " + String.join(" ", Queries.ALL.keySet()));
    System.exit(2);
  }

  public static void main(String[] args) throws Exception {
    String query = "q0";
    long events = 10_000_000L;
    int parallelism = Runtime.getRuntime().availableProcessors();
    Duration checkpointInterval = null;
    long warmupEvents = 0;
    int generators = NexmarkEvents.DEFAULT_GENERATORS;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      String v = null;
      int eq = a.indexOf('=');
      if (a.startsWith("--") && eq > 0) {
        v = a.substring(eq + 1);
        a = a.substring(0, eq);
      } else if (a.equals("--help") || a.equals("-h")) {
        usage("help");
      } else if (i + 1 < args.length) {
        v = args[++i];
      } else {
        usage("missing value for " + a);
      }
      switch (a) {
        case "--query": case "-q": query = v; break;
        case "--events": events = Long.parseLong(v.replace("_", "")); break;
        case "--parallelism": case "-p": parallelism = Integer.parseInt(v); break;
        case "--checkpoint-interval": checkpointInterval = parseDuration(v); break;
        case "--warmup-events": warmupEvents = Long.parseLong(v.replace("_", "")); break;
        case "--generators": generators = Integer.parseInt(v); break;
        default: usage("unknown flag " + a);
      }
    }
    if (!Queries.ALL.containsKey(query)) {
      usage("unknown query " + query);
    }
    if (events < 1 || parallelism < 1 || generators < 1) {
      usage("--events, --parallelism and --generators must be positive");
    }

    if (warmupEvents > 0) {
      run(query, warmupEvents, parallelism, checkpointInterval, generators);
    }
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    long cpu0 = os.getProcessCpuTime();
    long t0 = System.nanoTime();
    run(query, events, parallelism, checkpointInterval, generators);
    long wallNs = System.nanoTime() - t0;
    long cpuNs = os.getProcessCpuTime() - cpu0;
    System.out.printf("%s: %d events, parallelism %d, %d ms wall, %d ms CPU: %.0f events/s, %.0f events per CPU-second%n",
        query, events, parallelism, wallNs / 1_000_000, cpuNs / 1_000_000,
        events / (wallNs / 1e9), events / (cpuNs / 1e9));
    System.exit(0);
  }

  /** Runs the query over {@code events} events on a fresh local MiniCluster, to completion. */
  static void run(String query, long events, int parallelism, Duration checkpointInterval,
      int generators) throws Exception {
    Map<String, String> settings = new HashMap<>();
    settings.put("parallelism.default", Integer.toString(parallelism));
    // Chained operators hand rows on without a defensive deep copy (as nexmark/nexmark's
    // Flink configuration does).
    settings.put("pipeline.object-reuse", "true");
    if (checkpointInterval != null) {
      settings.put("execution.checkpointing.interval", checkpointInterval.toMillis() + " ms");
      settings.put("execution.checkpointing.mode", "EXACTLY_ONCE");
    }
    Configuration conf = Configuration.fromMap(settings);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(parallelism, conf);
    StreamTableEnvironment tEnv =
        StreamTableEnvironment.create(env, EnvironmentSettings.inStreamingMode());
    tEnv.getConfig().set("pipeline.name", "weir-flink-bench " + query);
    for (String s : Queries.eventTables(events, generators, parallelism)) {
      tEnv.executeSql(s);
    }
    List<String> statements = Queries.ALL.get(query);
    for (int i = 0; i < statements.size() - 1; i++) {
      tEnv.executeSql(statements.get(i));
    }
    TableResult result = tEnv.executeSql(statements.get(statements.size() - 1));
    result.await();
  }

  /** "1s", "200ms", "1m", or plain milliseconds. */
  static Duration parseDuration(String s) {
    s = s.trim();
    if (s.endsWith("ms")) {
      return Duration.ofMillis(Long.parseLong(s.substring(0, s.length() - 2)));
    } else if (s.endsWith("s")) {
      return Duration.ofMillis(Math.round(Double.parseDouble(s.substring(0, s.length() - 1)) * 1000));
    } else if (s.endsWith("m")) {
      return Duration.ofMinutes(Long.parseLong(s.substring(0, s.length() - 1)));
    }
    return Duration.ofMillis(Long.parseLong(s));
  }
}
