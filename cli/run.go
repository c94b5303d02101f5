package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli/internal/web"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/internal/plan"
)

// runFlags are the flags every job shares.
type runFlags struct {
	parallelism       int
	taskParallelism   string
	maxParallelism    int
	output            string
	explain           bool
	onMalformed       string
	progress          string
	watermarkInterval time.Duration
	idleTimeout       time.Duration
	http              string
	latency           string
	latencyInterval   time.Duration
	ft                ftFlags
	// jobFlags are the job's own flags.
	jobFlags []*pflag.Flag
}

func runCommand(stdout, stderr io.Writer, s *settings) *cobra.Command {
	run := &cobra.Command{
		Use:   "run JOB [flags]",
		Short: "Run a job on an embedded local cluster",
		Long: `Run a job in this process, in parallel, until its bounded input is exhausted
(exit status 0) or it fails (exit status 1). Ctrl-C stops it (exit status
130) and names the last completed checkpoint, which --restore latest
resumes from when checkpoints go to --state-dir. SIGUSR1 takes a savepoint
into --savepoint-dir; with --http, weir savepoint and weir stop take one
(docs/savepoints.md). Every job takes the flags below, before or after
JOB; each job has its own flags too, listed by weir run JOB --help.`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || args[0] == "--help" || args[0] == "-h" {
				return cmd.Help()
			}
			return usagef("unknown job %q; available jobs: %s", args[0], s.jobNames())
		},
	}
	// The shared flags are parsed by each job's command; declared here
	// too, they are listed by weir run --help.
	run.Flags().SortFlags = false
	(&runFlags{}).define(run.Flags())
	for _, j := range s.jobs() {
		run.AddCommand(jobCommand(j, stdout, stderr))
	}
	return run
}

func jobCommand(j Job, stdout, stderr io.Writer) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   j.Name + " [flags]",
		Short: j.Short,
		Long:  j.Long,
		Args:  cobra.NoArgs,
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	build := f.defineJob(j, fs)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return runJob(cmd.Context(), j, build, f, stdout, stderr)
	}
	return cmd
}

// defineJob declares j's own flags and then the shared ones on fs, and
// returns j's builder.
func (f *runFlags) defineJob(j Job, fs *pflag.FlagSet) Builder {
	build := j.Flags(fs)
	fs.VisitAll(func(fl *pflag.Flag) { f.jobFlags = append(f.jobFlags, fl) })
	f.define(fs)
	return build
}

// recordSettings records the job's flags in p's checkpoints, except those
// the job marked as changeable on restore (MayChangeOnRestore).
func (f *runFlags) recordSettings(p *weir.Pipeline) {
	for _, fl := range f.jobFlags {
		if !ChangeableOnRestore(fl) {
			p.RecordSetting("--"+fl.Name, fl.Value.String())
		}
	}
}

// define declares the flags every job shares.
func (f *runFlags) define(fs *pflag.FlagSet) {
	fs.IntVarP(&f.parallelism, "parallelism", "p", runtime.GOMAXPROCS(0), "default number of parallel subtasks per operator")
	fs.IntVar(&f.maxParallelism, "max-parallelism", 128, "number of key groups: the upper bound of parallelism and the unit of keyed state")
	fs.StringVar(&f.taskParallelism, "task-parallelism", "", `parallelism of single tasks, as ID=N pairs separated by commas (IDs as --explain numbers the tasks), over --parallelism; weir rescale --operator records its live changes so`)
	fs.StringVarP(&f.output, "output", "o", "-", `where results go: a directory of JSON-lines part files (part-<subtask>-<checkpoint>.jsonl when checkpoints are taken, part-<subtask>.jsonl without), an s3://bucket/prefix?endpoint=URL location that receives JSON-lines part files exactly-once, or "-" for standard output`)
	fs.BoolVar(&f.explain, "explain", false, "print the physical plan and exit without running")
	fs.StringVar(&f.onMalformed, "on-malformed", "fail", `what to do with input records that cannot be parsed: "fail" stops the job naming the record; "skip" drops and counts them`)
	fs.StringVar(&f.progress, "progress", "auto", `show progress on standard error: "auto" (when it is a terminal), "on" or "off"`)
	fs.DurationVar(&f.watermarkInterval, "watermark-interval", 200*time.Millisecond, "how often sources emit watermarks")
	fs.DurationVar(&f.idleTimeout, "idle-timeout", 0, "mark a source subtask idle after producing nothing this long (0: never)")
	fs.StringVar(&f.http, "http", "", "serve the dashboard (/), Prometheus metrics (/metrics) and the JSON API (/api/v1/jobs) on this address while the job runs, e.g. 127.0.0.1:8081 (default: off)")
	fs.StringVar(&f.latency, "latency-tracking", "off", `latency markers: "off", "sampled" (a marker every --latency-interval per source subtask) or "full" (one after every batch a source reads); sinks then also record event-time latency`)
	fs.DurationVar(&f.latencyInterval, "latency-interval", 2*time.Second, "interval of sampled latency markers")
	f.ft.define(fs)
}

// baseOptions returns the pipeline options of the shared flags, except
// the fault-tolerance ones.
func (f *runFlags) baseOptions() ([]weir.Option, connector.MalformedPolicy, error) {
	policy, err := connector.ParseMalformedPolicy(f.onMalformed)
	if err != nil {
		return nil, policy, usagef("--on-malformed: %v", err)
	}
	if f.parallelism < 1 || f.parallelism > f.maxParallelism {
		return nil, policy, usagef("--parallelism must be between 1 and --max-parallelism (%d), got %d", f.maxParallelism, f.parallelism)
	}
	base := []weir.Option{weir.WithParallelism(f.parallelism), weir.WithMaxParallelism(f.maxParallelism),
		weir.WithWatermarkInterval(f.watermarkInterval), weir.WithIdleTimeout(f.idleTimeout)}
	if f.taskParallelism != "" {
		tasks, err := plan.ParseTaskParallelism(f.taskParallelism)
		if err != nil {
			return nil, policy, usagef("--task-parallelism: %v", err)
		}
		base = append(base, weir.WithTaskParallelism(tasks))
	}
	switch f.latency {
	case "off":
	case "sampled":
		if f.latencyInterval <= 0 {
			return nil, policy, usagef("--latency-interval must be positive, got %v", f.latencyInterval)
		}
		base = append(base, weir.WithLatencyTracking(f.latencyInterval))
	case "full":
		base = append(base, weir.WithLatencyTracking(-1))
	default:
		return nil, policy, usagef(`--latency-tracking must be "off", "sampled" or "full", not %q`, f.latency)
	}
	return base, policy, nil
}

func runJob(ctx context.Context, j Job, build Builder, f *runFlags, stdout, stderr io.Writer) error {
	terminal := isTerminal(stderr)
	// The job logs from several goroutines (the engine, tasks, standbys)
	// while the progress line is redrawn from another.
	stderr = &lockedWriter{w: stderr}
	base, policy, err := f.baseOptions()
	if err != nil {
		return err
	}
	ftOpts, err := f.ft.options()
	if err != nil {
		return err
	}
	if f.ft.verify && (f.output == "-" || f.output == "" || strings.HasPrefix(f.output, "s3://")) {
		return usagef("--verify compares output directories: give --output a local directory")
	}
	var skipped atomic.Int64
	var lastSkip atomic.Value
	cfg := JobConfig{Output: f.output, Stdout: stdout, OnMalformed: policy, Malformed: func(e connector.MalformedError) {
		skipped.Add(1)
		lastSkip.Store(e.Error())
	}}
	show := f.progress == "on" || (f.progress == "auto" && terminal)
	logf := func(line string) {
		if show {
			fmt.Fprint(stderr, "\r\033[K") // clear the progress line
		}
		fmt.Fprintf(stderr, "weir: %s\n", line)
	}
	var refDir string
	if f.ft.verify && !f.explain {
		var took time.Duration
		if refDir, took, err = runReference(ctx, build, cfg, base, j.Name, f.output, stderr); err != nil {
			return err
		}
		// Spread random-moment kills over about the job's duration.
		ftOpts = append(ftOpts, weir.WithFailureWindow(max(took, 10*time.Millisecond)))
	}
	cfg.Explain, cfg.Log = f.explain, logf
	onStart := weir.WithOnStart(func(s weir.RunStart) error { return startOutput(f.output, s) })
	p := weir.NewPipeline(append(append(base, weir.WithName(j.Name), weir.WithLog(logf), onStart), ftOpts...)...)
	if err := build(p, cfg); err != nil {
		if errors.Is(err, errExplained) {
			return nil
		}
		return usageError{err}
	}
	f.recordSettings(p)
	if f.explain {
		plan, err := p.Explain()
		if err != nil {
			return err
		}
		fmt.Fprint(stdout, plan)
		return nil
	}
	if _, err := p.Explain(); err != nil { // report graph errors before starting
		return err
	}
	if f.http != "" {
		srv := web.NewServer(p)
		srv.DefaultSavepointDir = f.ft.savepointDir
		url, stopHTTP, err := srv.Start(ctx, f.http)
		if err != nil {
			return usagef("--http: %v", err)
		}
		defer stopHTTP()
		fmt.Fprintf(stderr, "weir: dashboard at %s/, metrics at %s/metrics, API at %s/api/v1/jobs\n", url, url, url)
	}
	start := time.Now()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		if show {
			reportProgress(p, stderr, start, stop)
		}
	}()
	stopSavepoints := watchSavepointSignal(ctx, p, f.ft.savepointDir, logf)
	err = p.Run(ctx)
	stopSavepoints()
	close(stop)
	<-done
	elapsed := time.Since(start)
	in, out := totals(p.Metrics())
	if show {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if n := skipped.Load(); n > 0 {
		fmt.Fprintf(stderr, "weir: skipped %d malformed records (last: %v)\n", n, lastSkip.Load())
	}
	printLateDropped(stderr, p.Metrics())
	printReport(stderr, p.Report())
	if err != nil && ctx.Err() != nil {
		return interrupted(j.Name, f, p.Report())
	}
	if err != nil {
		return err
	}
	if r := p.Report(); r != nil && r.Stopped && len(r.Savepoints) > 0 {
		sp := r.Savepoints[len(r.Savepoints)-1]
		fmt.Fprintf(stderr, "weir: job %q stopped after the savepoint %s in %v: %d records read, %d records written; run the same command with --restore %s to continue it\n",
			j.Name, sp, elapsed.Round(time.Millisecond), in, out, sp)
		return nil
	}
	attempt := countsSince(p.Report())
	fmt.Fprintf(stderr, "weir: job %q finished in %v: %d records read, %d records written%s\n",
		j.Name, elapsed.Round(time.Millisecond), in, out, attempt)
	if f.ft.verify {
		g, _ := weir.ParseGuarantee(f.ft.guarantee)
		return verify(j, g, refDir, f.output, stderr)
	}
	return nil
}

// countsSince says since when the sinks' counters of a finished run
// count, if not since its start: since its last attempt started, or since
// its last live rescale replaced the sinks' subtasks, whichever was later.
func countsSince(r *weir.Report) string {
	if r == nil {
		return ""
	}
	var failed, rescaled time.Time
	if n := len(r.Recoveries); n > 0 {
		failed = r.Recoveries[n-1].FailedAt
	}
	var at int64
	for _, rs := range r.Rescales {
		if rs.Live && !rs.At.Before(rescaled) {
			rescaled, at = rs.At, rs.Checkpoint
		}
	}
	switch {
	case !rescaled.IsZero() && rescaled.After(failed):
		return fmt.Sprintf(" since the live rescale at checkpoint %d", at)
	case !failed.IsZero():
		return " in the last attempt"
	}
	return ""
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// totals returns the records read by sources and written into sinks.
func totals(ms []weir.TaskMetrics) (in, out int64) {
	for _, m := range ms {
		if m.Source {
			in += m.RecordsIn
		}
		out += m.RecordsWritten
	}
	return in, out
}

// reportProgress rewrites one status line every second until stop closes.
func reportProgress(p *weir.Pipeline, w io.Writer, start time.Time, stop <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var lastIn int64
	last := start
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			ms := p.Metrics()
			in, out := totals(ms)
			wm := int64(weir.MinWatermark)
			for _, m := range ms {
				if m.Sink && (wm == weir.MinWatermark || m.Watermark < wm) {
					wm = m.Watermark
				}
			}
			rate := float64(in-lastIn) / now.Sub(last).Seconds()
			lastIn, last = in, now
			fmt.Fprintf(w, "\r\033[K%v  read %d (%.0f records/s)  written %d  watermark %s",
				now.Sub(start).Round(time.Second), in, rate, out, formatWatermark(wm))
		}
	}
}

func formatWatermark(wm int64) string {
	switch wm {
	case weir.MinWatermark:
		return "none"
	case weir.EndOfTime:
		return "end"
	}
	return time.UnixMilli(wm).UTC().Format("2006-01-02T15:04:05.000Z")
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
