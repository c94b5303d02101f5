package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/weir-stream/weir"
)

// printReport prints the checkpoints and recoveries of a run.
func printReport(w io.Writer, r *weir.Report) {
	if r == nil {
		return
	}
	if len(r.Checkpoints) > 0 {
		// The mean and max cover the checkpoints the report still lists.
		var done int
		var total, longest time.Duration
		for _, c := range r.Checkpoints {
			if c.Status == "completed" {
				done++
				total += c.Duration
				longest = max(longest, c.Duration)
			}
		}
		fmt.Fprintf(w, "weir: checkpoints: %d completed, %d aborted", r.Completed, r.Aborted)
		if r.ConsistencyChecked > 0 {
			fmt.Fprintf(w, ", %d checked as consistent cuts", r.ConsistencyChecked)
		}
		if done > 0 {
			fmt.Fprintf(w, "; duration mean %v, max %v; last size %s", (total / time.Duration(done)).Round(time.Microsecond), longest.Round(time.Microsecond), sizes(*r.LastCompletedCheckpoint))
		}
		fmt.Fprintln(w)
		from := max(0, len(r.Checkpoints)-10)
		if from > 0 {
			fmt.Fprintf(w, "weir:   (%d earlier checkpoints not shown)\n", from)
		}
		for _, c := range r.Checkpoints[from:] {
			line := fmt.Sprintf("weir:   checkpoint %d %s in %v, %s, alignment %v, sync %v", c.ID, c.Status,
				c.Duration.Round(time.Microsecond), sizes(c), c.Alignment.Round(time.Microsecond), c.Sync.Round(time.Microsecond))
			if c.Reason != "" {
				line += " (" + c.Reason + ")"
			}
			fmt.Fprintln(w, line)
		}
	}
	if r.Injected > 0 {
		fmt.Fprintf(w, "weir: %d failures injected\n", r.Injected)
	}
	for i, rec := range r.Recoveries {
		if rec.Takeover {
			fmt.Fprintf(w, "weir: recovery %d: taken over by an active standby in %v, nothing restarted; cause: %s\n", i+1, rec.Duration.Round(time.Microsecond), rec.Cause)
			continue
		}
		from := "the beginning"
		if rec.Amnesia {
			from = "empty state with sources where they stopped"
		} else if rec.Restored > 0 {
			from = fmt.Sprintf("checkpoint %d", rec.Restored)
		}
		took := "no output after the restart"
		if rec.Duration > 0 {
			took = fmt.Sprintf("first output %v after the failure", rec.Duration.Round(time.Millisecond))
		}
		if rec.Subtasks > 0 && rec.Restarted < rec.Subtasks {
			from += fmt.Sprintf(" for %d of %d subtasks", rec.Restarted, rec.Subtasks)
		}
		fmt.Fprintf(w, "weir: recovery %d: restored %s, %s; cause: %s\n", i+1, from, took, rec.Cause)
	}
	for i, rs := range r.Rescales {
		fmt.Fprintf(w, "weir: rescale %d: %s\n", i+1, describeRescale(rs))
	}
	for i, lc := range r.LeaderChanges {
		what := "restarted the job from its latest checkpoint"
		if lc.Adopted {
			what = "adopted the running tasks: none restarted"
		}
		fmt.Fprintf(w, "weir: leader change %d: the coordinator of epoch %d %s, after waiting %v for the workers\n", i+1, lc.Epoch, what, lc.Wait.Round(time.Millisecond))
	}
}

// describeRescale says what a rescale changed, at which checkpoint, how
// long it paused and why: "parallelism 2 -> 4 at checkpoint 5, paused
// 1.2s; cause: requested", with the task and "live" for a live one.
func describeRescale(rs weir.Rescale) string {
	pause := "no output since"
	if rs.Pause > 0 {
		pause = fmt.Sprintf("paused %v", rs.Pause.Round(time.Millisecond))
	}
	what, how := "", ""
	if rs.Live {
		what, how = fmt.Sprintf("task %q ", rs.Task), " live"
	}
	return fmt.Sprintf("%sparallelism %d -> %d%s at checkpoint %d, %s; cause: %s", what, rs.From, rs.To, how, rs.Checkpoint, pause, rs.Cause)
}

func bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// printLateDropped names the tasks whose window operators dropped late
// records for want of a late side output, and how many.
func printLateDropped(w io.Writer, ms []weir.TaskMetrics) {
	for _, m := range ms {
		if m.LateDropped > 0 {
			fmt.Fprintf(w, "weir: task %q dropped %d late records (too late for every window, and no late side output)\n", m.Name, m.LateDropped)
		}
	}
}

// sizes describes what a checkpoint wrote, and for an incremental one
// the state it holds.
func sizes(c weir.CheckpointStats) string {
	if c.FullSize > c.Size {
		return fmt.Sprintf("%s (incremental, of %s)", bytes(c.Size), bytes(c.FullSize))
	}
	return bytes(c.Size)
}
