// Command compare runs the Nexmark queries on weir and on Apache Flink
// side by side on this machine and prints a table of median throughputs
// with the weir/Flink ratio and, as the "limit", the throughput of a
// hand-written single-threaded Go loop per query (bench/loops).
//
//	go run ./bench/compare [--queries q0,q5] [--runs 3] [--events 2000000]
//	    [--warmup-events 1000000] [-p 2] [--checkpoint-interval 1s] [--sql]
//
// It first builds what it needs: the weir runner (bench/compare/weirrun,
// with go build) and the Flink runner (bench/flink, with mvn package).
// Then, per query, it runs the two engines alternately --runs times each
// (weir first in even rounds, Flink first in odd ones), every run a fresh
// process over the same generated events, at the same parallelism, with
// exactly-once checkpoints at the same interval written to a temporary
// directory. Each run is one job over --warmup-events plus --events events;
// the engine's runner measures only the phase after its sources have read
// the warm-up events, so the JVM's start-up, SQL planning, class loading
// and JIT compilation of the hot paths fall outside the measurement (as do
// weir's, which are small). Throughput is events per second of wall time
// and events per CPU-second of the engine process's own CPU time (all its
// threads: for Flink including GC and JIT compiler threads). The loop runs
// once per round in a child process over the same events.
//
// With --sql weir runs each query twice per round: the Go-API query and
// the query's published Flink SQL (weirrun --sql), the three engines in a
// rotating order, and a second table sets weir SQL's events per
// CPU-second beside weir Go's and Flink's with the ratios SQL/Go and
// SQL/Flink.
//
// The table gives each engine's median peak resident set size too: the
// kernel's ru_maxrss of the exited runner process (for Flink the JVM,
// with its MiniCluster).
//
// With --latency it compares end-to-end latency instead (latency.go):
//
//	go run ./bench/compare --latency [--runs 3] [--latency-duration 10s]
//	    [--latency-warmup 2s] [--peak-fractions 0.25,0.5,0.9]
//	    [--flink-buffer-timeouts default,1ms] [--json FILE]
//
// weir bench latency (the weir command) and the Flink runner's latency
// mode run the same pipeline (a rate-scheduled source stamping each record
// with its due time, a key by over --keys keys, a per-key count in keyed
// state, a sink recording the latency in the same histogram) at
// parallelism -p with exactly-once aligned checkpoints every
// --checkpoint-interval. First each engine's peak (unthrottled) is
// measured --runs times; then every engine runs at --peak-fractions of
// weir's median peak and of Flink's (the first Flink variant's), --runs
// rounds over all those rates, the engines' order alternating, and the
// table gives the median p50 and p99 per engine and rate. Each Flink
// variant sets Flink's network buffer timeout (execution.buffer-timeout.interval;
// "default" keeps Flink's 100ms). --json writes the medians, from which
// --plot FILE draws the latency-versus-rate plot as SVG (plot.go):
//
//	go run ./bench/compare --plot docs/latency-vs-rate.json > docs/latency-vs-rate.svg
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// compared are the queries of the comparison, in table order.
var compared = []string{"q0", "q1", "q2", "q3", "q4", "q5", "q7", "q8", "q11", "q12", "q17", "q18", "q19", "q20"}

type options struct {
	queries    []string
	runs       int
	events     int64
	warmup     int64
	par        int
	interval   time.Duration
	generators int
	timeout    time.Duration
	skipBuild  bool
	noFlink    bool
	sql        bool
	java       string
	jvmOpts    string
	latency    *latencyOptions // nil: the Nexmark comparison
}

func main() {
	// A child run of a loop (see runLoopChild): not for direct use.
	if len(os.Args) > 1 && os.Args[1] == loopChildArg {
		if err := runLoopChild(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "compare loop:", err)
			os.Exit(1)
		}
		return
	}
	var o options
	qs := flag.String("queries", strings.Join(compared, ","), "comma-separated queries")
	flag.IntVar(&o.runs, "runs", 3, "runs of each engine per query (medians are taken over them)")
	flag.Int64Var(&o.events, "events", 2_000_000, "events in the measured phase of each run")
	flag.Int64Var(&o.warmup, "warmup-events", 1_000_000, "events before the measured phase, in the same job")
	flag.IntVar(&o.par, "p", 2, "parallelism of every operator in both engines")
	flag.DurationVar(&o.interval, "checkpoint-interval", time.Second, "exactly-once checkpoint interval of both engines")
	flag.IntVar(&o.generators, "generators", 100, "Beam generators the event space is split into")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up on a run after this long")
	flag.BoolVar(&o.skipBuild, "skip-build", false, "use the runners built by an earlier invocation")
	flag.BoolVar(&o.noFlink, "no-flink", false, "run only weir and the loops")
	flag.BoolVar(&o.sql, "sql", false, "also run weir on each query's published SQL, and compare it")
	flag.StringVar(&o.java, "java", "java", "the java command (Java 17)")
	flag.StringVar(&o.jvmOpts, "jvm-opts", "", "extra JVM options, space-separated")
	latency := flag.Bool("latency", false, "compare end-to-end latency instead of Nexmark throughput")
	var l latencyOptions
	flag.DurationVar(&l.duration, "latency-duration", 10*time.Second, "with --latency: how long each run is measured, after its warm-up")
	flag.DurationVar(&l.warmup, "latency-warmup", 2*time.Second, "with --latency: how long each run goes before records are measured")
	flag.Int64Var(&l.keys, "keys", 10_000, "with --latency: distinct keys")
	fractions := flag.String("peak-fractions", "0.25,0.5,0.9", "with --latency: fractions of weir's and of Flink's peak to run at")
	bts := flag.String("flink-buffer-timeouts", "default,1ms", "with --latency: a Flink variant per network buffer timeout (default: Flink's, 100ms)")
	flag.StringVar(&l.jsonPath, "json", "", "with --latency: write the medians as JSON to this file")
	plot := flag.String("plot", "", "write the SVG plot of this --latency --json file to standard output and exit")
	flag.Parse()
	if *plot != "" {
		if err := writeLatencyPlot(os.Stdout, *plot); err != nil {
			fmt.Fprintln(os.Stderr, "compare:", err)
			os.Exit(1)
		}
		return
	}
	o.queries = strings.Split(*qs, ",")
	if *latency {
		for _, f := range strings.Split(*fractions, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || v <= 0 || v > 1 {
				fmt.Fprintf(os.Stderr, "compare: --peak-fractions: want fractions in (0, 1], got %q\n", f)
				os.Exit(2)
			}
			l.fractions = append(l.fractions, v)
		}
		l.bufferTimeouts = strings.Split(*bts, ",")
		o.latency = &l
	}
	if o.runs < 1 || o.events < 1 || o.warmup < 0 || o.par < 1 || o.interval <= 0 {
		fmt.Fprintln(os.Stderr, "compare: --runs, --events, -p and --checkpoint-interval must be positive")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	binDir := filepath.Join(root, "bench", "compare", ".bin")
	weirBin := filepath.Join(binDir, "weirrun")
	flinkJar := filepath.Join(root, "bench", "flink", "target", "weir-flink-bench.jar")
	weirCmd := filepath.Join(binDir, "weir")
	if !o.skipBuild {
		logf("building the weir runner")
		if err := command(ctx, root, "go", "build", "-o", weirBin, "./bench/compare/weirrun"); err != nil {
			return err
		}
		if err := command(ctx, root, "go", "build", "-o", weirCmd, "./cmd/weir"); err != nil {
			return err
		}
		if !o.noFlink {
			logf("building the Flink runner (mvn package; the first build downloads Flink 2.3.0)")
			if err := command(ctx, root, "mvn", "-q", "-f", filepath.Join("bench", "flink", "pom.xml"), "package"); err != nil {
				return err
			}
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// Flink's processes keep their temporary files (a mini-cluster's
	// directory, its RPC jar) in java.io.tmpdir and leave them there: one
	// directory for them all, removed at the end.
	javaTmp, err := os.MkdirTemp("", "compare-java")
	if err != nil {
		return err
	}
	defer os.RemoveAll(javaTmp)
	o.jvmOpts = strings.TrimSpace(o.jvmOpts + " -Djava.io.tmpdir=" + javaTmp)
	m := describeMachine(ctx, o)
	logf("%s", m)
	if o.latency != nil {
		return runLatency(ctx, o, latencyEngines(o, weirCmd, flinkJar), m)
	}
	common := []string{"--events", fmt.Sprint(o.events), "--warmup-events", fmt.Sprint(o.warmup),
		"--checkpoint-interval", o.interval.String(), "--generators", fmt.Sprint(o.generators)}
	engines := []engine{{name: "weir", cmd: append([]string{weirBin, "-p", fmt.Sprint(o.par)}, common...)}}
	if o.sql {
		engines = append(engines, engine{name: "sql", cmd: append([]string{weirBin, "--sql", "-p", fmt.Sprint(o.par)}, common...)})
	}
	if !o.noFlink {
		java := append([]string{o.java}, strings.Fields(o.jvmOpts)...)
		java = append(java, "-jar", flinkJar, "--parallelism", fmt.Sprint(o.par))
		engines = append(engines, engine{name: "flink", cmd: append(java, common...)})
	}
	var rows []row
	for _, q := range o.queries {
		r := row{query: q, runs: map[string][]measurement{}}
		for i := range o.runs {
			order := engines
			if o.sql {
				order = rotated(engines, i)
			} else if i%2 == 1 {
				order = reversed(engines)
			}
			for _, e := range order {
				mm, err := e.run(ctx, q, o.timeout)
				if err != nil {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					logf("%s %s run %d: %v", e.name, q, i+1, err)
					r.failed = append(r.failed, fmt.Sprintf("%s run %d: %v", e.name, i+1, firstLine(err.Error())))
					continue
				}
				logf("%s %s run %d: %s", e.name, q, i+1, mm)
				r.runs[e.name] = append(r.runs[e.name], mm)
			}
			lm, err := runLoop(ctx, self, q, o.warmup+o.events, o.generators, o.timeout)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				logf("loop %s run %d: %v", q, i+1, err)
				continue
			}
			logf("loop %s run %d: %s", q, i+1, lm)
			r.runs["loop"] = append(r.runs["loop"], lm)
		}
		rows = append(rows, r)
	}
	fmt.Println()
	fmt.Println(m)
	printTable(os.Stdout, rows, o)
	if o.sql {
		fmt.Println()
		printSQLTable(os.Stdout, rows, o)
	}
	return nil
}

// moduleRoot is the directory of weir's go.mod.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("run compare inside the weir module")
	}
	return filepath.Dir(mod), nil
}

// command runs a build step in dir, its output going to standard error.
func command(ctx context.Context, dir string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func reversed[T any](s []T) []T {
	out := make([]T, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// rotated returns s rotated left by n: each engine goes first in turn.
func rotated[T any](s []T, n int) []T {
	n %= len(s)
	return append(append([]T(nil), s[n:]...), s[:n]...)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
