package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/file"
	"github.com/weir-stream/weir/internal/engine"
)

// latencyFlags are the flags of weir bench latency.
type latencyFlags struct {
	rate        float64
	fractions   string
	duration    time.Duration
	warmup      time.Duration
	parallelism int
	keys        int64
	interval    time.Duration
	unaligned   bool
	twoPhase    bool
	failAfter   time.Duration
	jsonOut     bool
}

// latencyRun is one measured run of the latency benchmark.
type latencyRun struct {
	// Fraction is the share of the peak rate the run was throttled to: 0
	// for a run at an explicit --rate, 1 for the unthrottled peak run.
	Fraction   float64 `json:"peak_fraction"`
	TargetRate float64 `json:"target_rate"` // events/s; 0: unthrottled
	Rate       float64 `json:"rate"`        // measured events/s: Records over the duration
	Records    int64   `json:"records"`     // measured (after the warm-up)
	P50        float64 `json:"p50_ms"`
	P99        float64 `json:"p99_ms"`
	P999       float64 `json:"p99_9_ms"`
	Max        float64 `json:"max_ms"`
	// Recovery is the latency around the failure of a run with
	// --fail-after.
	Recovery *latencyRecovery `json:"recovery,omitempty"`
}

// latencyReport is what weir bench latency prints with --json.
type latencyReport struct {
	Parallelism    int          `json:"parallelism"`
	Checkpoints    string       `json:"checkpoints"` // aligned, unaligned or none
	IntervalMS     float64      `json:"checkpoint_interval_ms"`
	TwoPhaseCommit bool         `json:"two_phase_commit"`
	DurationS      float64      `json:"duration_s"`
	WarmupS        float64      `json:"warmup_s"`
	PeakRate       float64      `json:"peak_rate,omitempty"` // events/s, when measured
	FailAfterS     float64      `json:"fail_after_s,omitempty"`
	Runs           []latencyRun `json:"runs"`
}

func benchLatencyCommand(stdout io.Writer) *cobra.Command {
	var f latencyFlags
	cmd := &cobra.Command{
		Use:   "latency",
		Short: "Measure end-to-end latency at a rate or at fractions of the peak",
		Long: `Measure end-to-end record latency of a keyed pipeline: a rate-controlled
source emits records stamped with the wall-clock time each was due, a hash
exchange (key by) routes them to a per-key count, and the sink records now
minus the stamp in a histogram. Reports p50, p99, p99.9 and the maximum.

A throttled source stamps each record with the time its schedule was due,
so a source held back by backpressure charges the wait to the records
that waited. Records emitted during --warmup are not measured.

With --rate the run is at that many events/s. Otherwise the peak is
measured first (the same pipeline unthrottled, for --warmup plus
--duration, stamping records when read) and then one run is made at
each of --peak-fraction of it (none with an empty --peak-fraction).

The job is exactly-once with checkpoints every --checkpoint-interval,
aligned unless --unaligned; with --checkpoint-interval 0 it takes none
(guarantee none), to tell the checkpoints' share of the latency. With --two-phase-commit the sink is a file
sink (in a temporary directory) committing with checkpoints, and a record
is measured when the transaction of its checkpoint committed, so its
latency includes the wait for the checkpoint.

With --fail-after each throttled run (not the peak's) kills one random
subtask that long after its start, or as soon after as a checkpoint has
completed, and reports besides the whole run the latency of the records
emitted from the failure to 2s after the recovery completed (the first
record written after the restart), the p99 before the failure, and how
long after the failure the records' p99 (per 100ms of emit time) was
back under it. A record written again after the restore (replayed from
the checkpoint) is measured when it was first written.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fractions, err := f.validate(cmd.Flags().Changed("rate"))
			if err != nil {
				return err
			}
			rep := latencyReport{Parallelism: f.parallelism, Checkpoints: "aligned", IntervalMS: ms(f.interval),
				TwoPhaseCommit: f.twoPhase, DurationS: f.duration.Seconds(), WarmupS: f.warmup.Seconds(), FailAfterS: f.failAfter.Seconds()}
			switch {
			case f.interval == 0:
				rep.Checkpoints = "none"
			case f.unaligned:
				rep.Checkpoints = "unaligned"
			}
			if f.rate > 0 {
				r, err := f.run(cmd.Context(), f.rate)
				if err != nil {
					return err
				}
				rep.Runs = append(rep.Runs, r)
			} else {
				peak, err := f.run(cmd.Context(), 0)
				if err != nil {
					return err
				}
				peak.Fraction = 1
				rep.PeakRate = peak.Rate
				for _, fr := range fractions {
					r, err := f.run(cmd.Context(), fr*peak.Rate)
					if err != nil {
						return err
					}
					r.Fraction = fr
					rep.Runs = append(rep.Runs, r)
				}
				rep.Runs = append(rep.Runs, peak)
			}
			if f.jsonOut {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			return rep.table(stdout)
		},
	}
	fs := cmd.Flags()
	fs.Float64Var(&f.rate, "rate", 0, "events per second over all source subtasks (instead of --peak-fraction)")
	fs.StringVar(&f.fractions, "peak-fraction", "0.25,0.5,0.9", "comma-separated fractions of the measured peak rate to run at (empty: measure the peak only)")
	fs.DurationVar(&f.duration, "duration", 10*time.Second, "how long each run is measured, after its warm-up")
	fs.DurationVar(&f.warmup, "warmup", 2*time.Second, "how long each run goes before records are measured")
	fs.IntVarP(&f.parallelism, "parallelism", "p", 2, "subtasks per operator")
	fs.Int64Var(&f.keys, "keys", 10_000, "distinct keys")
	fs.DurationVar(&f.interval, "checkpoint-interval", time.Second, "time between checkpoints (0: none, and no guarantee)")
	fs.BoolVar(&f.unaligned, "unaligned", false, "take unaligned checkpoints")
	fs.DurationVar(&f.failAfter, "fail-after", 0, "kill a random subtask this long after the start of each throttled run and measure the latency around the recovery")
	fs.BoolVar(&f.twoPhase, "two-phase-commit", false, "write to a file sink that commits with checkpoints and measure at commit")
	fs.BoolVar(&f.jsonOut, "json", false, "print the report as JSON")
	return cmd
}

// validate checks the flags and returns the peak fractions to run at
// (none when --rate is set).
func (f *latencyFlags) validate(rateSet bool) ([]float64, error) {
	switch {
	case f.duration <= 0:
		return nil, usagef("--duration must be positive, got %v", f.duration)
	case f.warmup < 0:
		return nil, usagef("--warmup must not be negative, got %v", f.warmup)
	case f.parallelism < 1:
		return nil, usagef("--parallelism must be at least 1, got %d", f.parallelism)
	case f.keys < 1:
		return nil, usagef("--keys must be at least 1, got %d", f.keys)
	case f.interval < 0:
		return nil, usagef("--checkpoint-interval must not be negative, got %v", f.interval)
	case f.interval == 0 && f.twoPhase:
		return nil, usagef("--two-phase-commit needs checkpoints (a positive --checkpoint-interval)")
	case f.failAfter < 0:
		return nil, usagef("--fail-after must not be negative, got %v", f.failAfter)
	case f.failAfter > 0 && f.interval == 0:
		return nil, usagef("--fail-after needs checkpoints to recover from (a positive --checkpoint-interval)")
	case f.failAfter > 0 && (f.failAfter <= f.warmup || f.failAfter >= f.warmup+f.duration):
		return nil, usagef("--fail-after must fall in the measured phase, after --warmup %v and before %v, got %v", f.warmup, f.warmup+f.duration, f.failAfter)
	case rateSet && f.rate <= 0:
		return nil, usagef("--rate must be positive, got %v", f.rate)
	case rateSet:
		return nil, nil
	}
	var fractions []float64
	if strings.TrimSpace(f.fractions) == "" { // the peak only
		return nil, nil
	}
	for _, s := range strings.Split(f.fractions, ",") {
		fr, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || fr <= 0 || fr > 1 {
			return nil, usagef("--peak-fraction: want fractions in (0, 1], got %q", s)
		}
		fractions = append(fractions, fr)
	}
	return fractions, nil
}

// run runs the pipeline once at rate events/s (0: unthrottled) and
// returns its measurements.
func (f *latencyFlags) run(ctx context.Context, rate float64) (latencyRun, error) {
	start := time.Now()
	measureFrom := start.Add(f.warmup)
	failing := f.failAfter > 0 && rate > 0
	sink := &probeSink{measureFrom: measureFrom.UnixNano()}
	if failing {
		sink.slotWidth = latencySlot
	}
	if f.twoPhase {
		dir, err := os.MkdirTemp("", "weir-bench-latency-")
		if err != nil {
			return latencyRun{}, err
		}
		defer os.RemoveAll(dir)
		sink.inner = file.JSONSink[probeEvent](dir)
	}
	opts := []weir.Option{weir.WithParallelism(f.parallelism), weir.WithName("bench-latency"), weir.WithGuarantee(weir.None)}
	if f.interval > 0 {
		opts = append(opts, weir.WithGuarantee(weir.ExactlyOnce),
			weir.WithCheckpoints(weir.CheckpointConfig{Interval: f.interval, Unaligned: f.unaligned}))
	}
	p := weir.NewPipeline(opts...)
	src := weir.FromSource(p, "source", probeSource{rate: rate, keys: f.keys, deadline: measureFrom.Add(f.duration)})
	counts := weir.Process(weir.KeyBy(src, func(e probeEvent) int64 { return e.Key }),
		func() *probeCounter { return &probeCounter{} }, weir.Name("count"))
	weir.To(counts, "sink", sink)
	var rep *engine.Report
	if failing {
		var err error
		if rep, err = runKilled(ctx, p, f.failAfter); err != nil {
			return latencyRun{}, err
		}
	} else if err := p.Run(ctx); err != nil {
		return latencyRun{}, err
	}
	h := sink.histogram()
	if h.n == 0 {
		return latencyRun{}, errNoProbes
	}
	run := latencyRun{TargetRate: rate, Rate: float64(h.n) / f.duration.Seconds(), Records: h.n,
		P50: ms(h.quantile(0.5)), P99: ms(h.quantile(0.99)), P999: ms(h.quantile(0.999)), Max: ms(time.Duration(h.max))}
	if failing {
		rec, err := recoveryLatency(rep, sink.slots(), start)
		if err != nil {
			return latencyRun{}, err
		}
		run.Recovery = &rec
	}
	return run, nil
}

// probeCounter counts the records of each key and emits each record with
// its key's count so far.
type probeCounter struct {
	count *weir.ValueState[int64, int64]
}

func (c *probeCounter) Open(sc *weir.StateContext[int64]) error {
	c.count = weir.NewValueState[int64](sc, "count")
	return nil
}

func (c *probeCounter) ProcessElement(ctx *weir.KeyedContext[int64, probeEvent], e probeEvent) error {
	n, _ := c.count.Value()
	n++
	c.count.Update(n)
	e.Count = n
	ctx.Emit(e)
	return nil
}

func (r latencyReport) table(w io.Writer) error {
	cp := "no checkpoints"
	if r.IntervalMS > 0 {
		cp = r.Checkpoints + " checkpoints every " + time.Duration(r.IntervalMS*float64(time.Millisecond)).String()
	}
	if r.TwoPhaseCommit {
		cp += ", two-phase-commit file sink"
	}
	fmt.Fprintf(w, "latency: parallelism %d, %s, %gs measured after %gs warm-up\n", r.Parallelism, cp, r.DurationS, r.WarmupS)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "load\ttarget ev/s\tmeasured ev/s\trecords\tp50 ms\tp99 ms\tp99.9 ms\tmax ms\t")
	for _, run := range r.Runs {
		target := fmt.Sprintf("%.0f", run.TargetRate)
		if run.TargetRate == 0 {
			target = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t\n", run.load(), target, run.Rate, run.Records, run.P50, run.P99, run.P999, run.Max)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.FailAfterS > 0 {
		return r.recoveryTable(w)
	}
	return nil
}

// load names the run's load: peak, a fraction of it, or rate.
func (run latencyRun) load() string {
	switch {
	case run.TargetRate == 0:
		return "peak"
	case run.Fraction > 0:
		return fmt.Sprintf("%g%%", run.Fraction*100)
	}
	return "rate"
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
