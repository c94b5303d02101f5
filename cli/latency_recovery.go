package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/engine"
)

// latencySlot is the resolution, in emit time, of the latencies around a
// failure (weir bench latency --fail-after).
const latencySlot = 100 * time.Millisecond

// afterRecovery is how long after the recovery completed the window
// around a failure extends.
const afterRecovery = 2 * time.Second

// latencyRecovery is the latency around the failure of a run with
// --fail-after. The window holds the records emitted from the failure to
// afterRecovery after the recovery completed (the first record written
// after the restart), in whole latencySlot slots of emit time: it starts
// with the slot the failure falls in.
type latencyRecovery struct {
	Injected   int     `json:"injected"`            // failures injected (1)
	Restored   int64   `json:"restored_checkpoint"` // the checkpoint the recovery restored
	FailedAtS  float64 `json:"failed_at_s"`         // since the start of the run
	RecoveryMS float64 `json:"recovery_ms"`         // failure to the first record written after the restart
	WindowMS   float64 `json:"window_ms"`
	Records    int64   `json:"records"` // in the window
	P50        float64 `json:"p50_ms"`
	P99        float64 `json:"p99_ms"`
	P999       float64 `json:"p99_9_ms"`
	Max        float64 `json:"max_ms"`
	// PreFailureP99 is the p99 of the records measured before the slot
	// the failure falls in; BackUnder the time from the failure to the
	// end of the first slot after it whose p99 is at most that again (-1:
	// none in the run).
	PreFailureP99 float64 `json:"pre_failure_p99_ms"`
	BackUnder     float64 `json:"back_under_p99_ms"`
}

// runKilled runs p with one kill of a random subtask at d after the start
// of its run (or, if no checkpoint has completed by then, as soon as one
// has: engine.NewInjectorAt), and returns the engine's report. It runs
// the engine on p's compiled configuration, as p.Run does, with the
// injector in place of one from weir.WithInjectedFailures, whose kills
// fall at random moments.
func runKilled(ctx context.Context, p *weir.Pipeline, d time.Duration) (*engine.Report, error) {
	cfg, err := p.Engine().Compile(ctx)
	if err != nil {
		return nil, fmt.Errorf("job %q: %w", p.Name(), err)
	}
	cfg.Failures = engine.NewInjectorAt(d, 1)
	rep, err := engine.Run(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("job %q: %w", p.Name(), err)
	}
	return rep, nil
}

// recoveryLatency measures the latency around the one failure of rep in
// the slots the sink kept; start is when the run started.
func recoveryLatency(rep *engine.Report, slots *latencySlots, start time.Time) (latencyRecovery, error) {
	if rep.Injected != 1 || len(rep.Recoveries) != 1 {
		return latencyRecovery{}, fmt.Errorf("the run had %d injected failures and %d recoveries, want one of each: make --fail-after earlier or --duration longer", rep.Injected, len(rep.Recoveries))
	}
	rec := rep.Recoveries[0]
	failed := rec.FailedAt.UnixNano()
	first := slots.slotOf(failed)
	end := failed + int64(afterRecovery)
	if rec.Duration > 0 {
		end += int64(rec.Duration)
	} else { // nothing written after the restart: the window runs to the end
		end = slots.origin + int64(len(slots.hs))*slots.width
	}
	last := slots.slotOf(end - 1)
	w := slots.merged(first, last+1)
	pre := slots.merged(0, first)
	out := latencyRecovery{Injected: rep.Injected, Restored: rec.Restored, FailedAtS: rec.FailedAt.Sub(start).Seconds(),
		RecoveryMS: ms(rec.Duration), WindowMS: ms(time.Duration(int64(last+1-first) * slots.width)), Records: w.n,
		P50: ms(w.quantile(0.5)), P99: ms(w.quantile(0.99)), P999: ms(w.quantile(0.999)), Max: ms(time.Duration(w.max)),
		PreFailureP99: ms(pre.quantile(0.99)), BackUnder: -1}
	limit := pre.quantile(0.99)
	for i := first + 1; i < len(slots.hs); i++ {
		if h := slots.hs[i]; h != nil && h.quantile(0.99) <= limit {
			out.BackUnder = ms(time.Duration(slots.origin + int64(i+1)*slots.width - failed))
			break
		}
	}
	return out, nil
}

// recoveryTable writes the latency around the failure of the runs that
// had one.
func (r latencyReport) recoveryTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "\naround the failure: records emitted from the failure to %v after the first output of the restarted job\n", afterRecovery)
	fmt.Fprintln(tw, "load\tfailed at s\trestored\trecovery ms\twindow ms\trecords\tp50 ms\tp99 ms\tp99.9 ms\tmax ms\tp99 before ms\tback under ms\t")
	for _, run := range r.Runs {
		c := run.Recovery
		if c == nil {
			continue
		}
		back := "never"
		if c.BackUnder >= 0 {
			back = fmt.Sprintf("%.0f", c.BackUnder)
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%d\t%.0f\t%.0f\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t\n", run.load(), c.FailedAtS, c.Restored,
			c.RecoveryMS, c.WindowMS, c.Records, c.P50, c.P99, c.P999, c.Max, c.PreFailureP99, back)
	}
	return tw.Flush()
}
