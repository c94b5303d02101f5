package weir.flinkbench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;

/**
 * Runs one Nexmark query on a local Flink MiniCluster and prints its steady-state throughput in
 * the format of {@code weir bench nexmark}.
 *
 * <pre>
 * java -jar target/weir-flink-bench.jar --query q5 --events 10000000 --parallelism 2
 *     [--warmup-events N] [--checkpoint-interval 1s] [--checkpoint-dir DIR] [--generators 100]
 * java -jar target/weir-flink-bench.jar latency ...   (see {@link LatencyMain})
 * </pre>
 *
 * <p>One job runs over warm-up plus measured events. The measured phase starts when the source
 * readers together have emitted the warm-up events (see {@link Phase}) and ends when the job has
 * finished; the wall time and the JVM process's CPU time of that phase are reported. SQL
 * planning, code generation, MiniCluster start-up and the first (interpreted, then JIT-compiled)
 * warm-up events are outside it.
 */
public final class Main {
  private Main() {}

  private static void usage(String message) {
    System.err.println("weir-flink-bench: " + message);
    System.err.println("usage: java -jar weir-flink-bench.jar --query qN --events N [--parallelism P]"
        + " [--warmup-events N] [--checkpoint-interval DURATION] [--checkpoint-dir DIR]"
        + " [--generators G] [--explain true]");
    System.err.println("queries: " + String.join(" ", Queries.ALL.keySet()));
    System.exit(2);
  }

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("latency")) {
      LatencyMain.main(java.util.Arrays.copyOfRange(args, 1, args.length));
      return;
    }
    String query = "q0";
    long events = 10_000_000L;
    int parallelism = Runtime.getRuntime().availableProcessors();
    Duration checkpointInterval = null;
    String checkpointDir = null;
    long warmupEvents = 0;
    int generators = NexmarkEvents.DEFAULT_GENERATORS;
    boolean explain = false;
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
        case "--checkpoint-dir": checkpointDir = v; break;
        case "--warmup-events": warmupEvents = Long.parseLong(v.replace("_", "")); break;
        case "--generators": generators = Integer.parseInt(v); break;
        case "--explain": explain = Boolean.parseBoolean(v); break;
        default: usage("unknown flag " + a);
      }
    }
    if (!Queries.ALL.containsKey(query)) {
      usage("unknown query " + query);
    }
    if (events < 1 || parallelism < 1 || generators < 1 || warmupEvents < 0) {
      usage("--events, --parallelism and --generators must be positive, --warmup-events not negative");
    }

    if (explain) {
      System.out.println(plan(query, events, parallelism, generators));
      System.exit(0);
    }
    Path tmp = null;
    if (checkpointInterval != null && checkpointDir == null) {
      tmp = Files.createTempDirectory("weir-flink-bench-");
      checkpointDir = tmp.toString();
    }
    long cpu0 = Phase.cpuNs();
    long t0 = System.nanoTime();
    Phase.reset(warmupEvents);
    try {
      run(query, warmupEvents + events, parallelism, checkpointInterval, checkpointDir, generators);
    } finally {
      if (tmp != null) {
        deleteTree(tmp);
      }
    }
    long endWall = System.nanoTime();
    long endCpu = Phase.cpuNs();
    if (!Phase.started()) {
      System.err.println("weir-flink-bench: the sources never passed the warm-up ("
          + Phase.emittedSoFar() + " of " + warmupEvents + " events)");
      System.exit(1);
    }
    long wallNs = endWall - Phase.startWallNs();
    long cpuNs = endCpu - Phase.startCpuNs();
    System.out.printf("%s: %d events after %d warm-up, parallelism %d, %d ms wall, %d ms CPU:"
            + " %.0f events/s, %.0f events per CPU-second (whole run %d ms wall, %d ms CPU)%n",
        query, events, warmupEvents, parallelism, wallNs / 1_000_000, cpuNs / 1_000_000,
        events / (wallNs / 1e9), events / (cpuNs / 1e9),
        (endWall - t0) / 1_000_000, (endCpu - cpu0) / 1_000_000);
    System.exit(0);
  }

  /** Runs the query over {@code events} events on a local MiniCluster, to completion. */
  static void run(String query, long events, int parallelism, Duration checkpointInterval,
      String checkpointDir, int generators) throws Exception {
    Map<String, String> settings = new HashMap<>();
    settings.put("parallelism.default", Integer.toString(parallelism));
    // Chained operators hand rows on without a defensive deep copy (as nexmark/nexmark's
    // Flink configuration does).
    settings.put("pipeline.object-reuse", "true");
    if (checkpointInterval != null) {
      settings.put("execution.checkpointing.interval", checkpointInterval.toMillis() + " ms");
      settings.put("execution.checkpointing.mode", "EXACTLY_ONCE");
      // Heap state (hashmap backend), checkpoints written to files as weir writes its to a
      // state directory. The JobManager-memory storage fails checkpoints over 5 MB of state,
      // which made q7 and q20 restart forever.
      settings.put("state.backend.type", "hashmap");
      settings.put("execution.checkpointing.storage", "filesystem");
      settings.put("execution.checkpointing.dir", Path.of(checkpointDir).toUri().toString());
      // The blackhole sink commits nothing: end the job when its tasks are done instead of
      // waiting up to an interval for a final checkpoint.
      settings.put("execution.checkpointing.checkpoints-after-tasks-finish", "false");
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

  /** The optimized plan of the query's INSERT (for --explain true). */
  static String plan(String query, long events, int parallelism, int generators) {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(parallelism);
    StreamTableEnvironment tEnv =
        StreamTableEnvironment.create(env, EnvironmentSettings.inStreamingMode());
    for (String s : Queries.eventTables(events, generators, parallelism)) {
      tEnv.executeSql(s);
    }
    List<String> statements = Queries.ALL.get(query);
    for (int i = 0; i < statements.size() - 1; i++) {
      tEnv.executeSql(statements.get(i));
    }
    return tEnv.explainSql(statements.get(statements.size() - 1));
  }

  private static void deleteTree(Path root) throws IOException {
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
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
