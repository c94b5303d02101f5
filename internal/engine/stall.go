package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/task"
)

// A job must never wait forever. An attempt that makes no progress for
// Config.StallTimeout — no record taken in or sent out by any subtask, no
// checkpoint completed, no subtask finished or restarted — is stalled:
// the engine logs what it waits on (the checkpoints in flight and, per
// subtask, what it is blocked on) and fails the attempt with ErrStalled,
// which the restart strategy handles like any other failure.
//
// A source that polls for input and finds none waits for the outside
// world, not for the job: while no checkpoint is in flight, that counts
// as progress where the executor can tell it (ActivityReporter).

// ErrStalled is the cause of an attempt that made no progress for
// Config.StallTimeout.
var ErrStalled = errors.New("the job made no progress")

// Activity is how much an attempt's subtasks did so far, as far as its
// executor can tell.
type Activity struct {
	// Records counts the records every subtask took in and sent out.
	Records int64
	// SourceIdle grows while a source polls for input and finds none;
	// IdleKnown says that the executor counts it.
	SourceIdle int64
	IdleKnown  bool
}

// ActivityReporter is an optional ability of an Executor: its subtasks'
// activity, for stall detection. Without it only checkpoints and
// finished subtasks count as progress.
type ActivityReporter interface {
	Activity() Activity
}

// WaitReporter is an optional ability of an Executor: what each subtask
// waits on, asked when the attempt stalled. It waits up to timeout for
// the subtasks' answers.
type WaitReporter interface {
	Waits(timeout time.Duration) []task.SubtaskWait
}

// stallWatch tells when an attempt stopped making progress.
type stallWatch struct {
	timeout time.Duration // 0: never
	since   time.Time     // the latest progress
	last    Activity
}

// newStallWatch returns the watch of an attempt run with cfg: its
// timeout is at least twice the checkpoint interval, so that a healthy
// job whose sources wait for input completes a checkpoint in it. It is
// off when no checkpoints are taken and the executor cannot tell an
// idle source from a stalled one.
func (e *engine) newStallWatch(x Executor) *stallWatch {
	t := e.cfg.StallTimeout
	if e.checkpoints() {
		t = max(t, 2*e.cfg.Interval)
	} else if ar, ok := x.(ActivityReporter); !ok || !ar.Activity().IdleKnown {
		t = 0
	}
	if e.cfg.StallTimeout <= 0 {
		t = 0
	}
	return &stallWatch{timeout: t, since: time.Now()}
}

// progressed notes progress the engine saw itself.
func (w *stallWatch) progressed() { w.since = time.Now() }

// stalled reports, on every tick, whether the attempt made no progress
// for the timeout; inflight says whether a checkpoint is in flight.
func (w *stallWatch) stalled(x Executor, inflight bool) bool {
	if w.timeout <= 0 {
		return false
	}
	now := time.Now()
	if ar, ok := x.(ActivityReporter); ok {
		a := ar.Activity()
		if a.Records != w.last.Records || (a.IdleKnown && !inflight && a.SourceIdle != w.last.SourceIdle) {
			w.since = now
		}
		w.last = a
	}
	return now.Sub(w.since) >= w.timeout
}

// stallReportTimeout bounds how long the report waits for subtasks to
// describe themselves.
const stallReportTimeout = 2 * time.Second

// checkStall fails the attempt when it stalled, after logging what it
// waits on.
func (a *attemptState) checkStall() {
	if a.stall == nil || a.failure != nil {
		return
	}
	if time.Now().Before(a.restartDue) {
		a.stall.progressed() // the engine waits for a restart delay, by design
	}
	if !a.stall.stalled(a.rt, len(a.acked) > 0) {
		return
	}
	report := a.waitReport()
	a.e.cfg.Log(report)
	if a.e.cfg.OnStall != nil {
		a.e.cfg.OnStall(report)
	}
	a.failure = fmt.Errorf("%w for %v (no record moved, no checkpoint completed, no subtask finished or restarted); what it waited on is logged", ErrStalled, a.stall.timeout)
	a.stall.progressed() // one report per stall
}

// waitReport describes what a stalled attempt waits on: its checkpoints
// in flight, what the engine itself waits for, and every subtask's state.
func (a *attemptState) waitReport() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the job made no progress for %v; it waits on:", a.stall.timeout)
	ids := make([]int64, 0, len(a.acked))
	for id := range a.acked {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		var missing []string
		for _, t := range a.tasks {
			if !a.acked[id][t] {
				missing = append(missing, t.String())
			}
		}
		age := ""
		if st := a.e.stats[id]; st != nil {
			age = fmt.Sprintf(", triggered %v ago", time.Since(st.Triggered).Round(time.Millisecond))
		}
		fmt.Fprintf(&b, "\n  checkpoint %d in flight%s: acknowledged by %d of %d subtasks, not by %s", id, age, len(a.tasks)-len(missing), len(a.tasks), strings.Join(missing, ", "))
	}
	if len(ids) == 0 {
		state := "paused until restarted subtasks run"
		if a.coord == nil {
			state = "off"
		} else if a.coord.Running() {
			state = "running"
		}
		fmt.Fprintf(&b, "\n  no checkpoint in flight (checkpoints: %s)", state)
	}
	if len(a.finished) > 0 {
		fin := make([]string, 0, len(a.finished))
		for id := range a.finished {
			fin = append(fin, id.String())
		}
		slices.Sort(fin)
		fmt.Fprintf(&b, "\n  finished: %s", strings.Join(fin, ", "))
	}
	if a.pending != nil {
		if p := a.pending(); p != "" {
			fmt.Fprintf(&b, "\n  %s", p)
		}
	}
	wr, ok := a.rt.(WaitReporter)
	if !ok {
		b.WriteString("\n  (the executor does not report what its subtasks wait on)")
		return b.String()
	}
	for _, w := range wr.Waits(stallReportTimeout) {
		fmt.Fprintf(&b, "\n  %s", w)
	}
	return b.String()
}

// Activity sums the records the attempt's subtasks took in and sent out,
// and the time its sources found nothing to read.
func (l Local) Activity() Activity {
	a := Activity{IdleKnown: true}
	for _, v := range l.Plan().Vertices {
		for i := range v.Parallelism {
			m := l.Metrics(v.ID, i)
			a.Records += m.RecordsIn.Load() + m.RecordsOut.Load()
			if v.Head().Kind == plan.Source {
				a.SourceIdle += m.Idle.Load()
			}
		}
	}
	return a
}
