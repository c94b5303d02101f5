package cluster_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir/cli/jobs"
	"github.com/weir-stream/weir/connector"
)

// A cluster job that stops making progress logs what each subtask waits
// on, as its worker tells, as a job in one process does: here both source
// subtasks are stuck in their readers, and the window subtasks wait for
// their input (or for a barrier). The stall fails the attempt, and the
// job recovers and finishes with the one-process run's output.
func TestClusterStallReportSaysWhatEachSubtaskWaitsOn(t *testing.T) {
	hs := newHoldingSource(true)
	var report string
	loseAWorker{
		source: func(s connector.Source[jobs.KeyEvent]) connector.Source[jobs.KeyEvent] {
			hs.Source = s
			return hs
		},
		stall:  2 * time.Second,
		script: stallAndReport(hs, &report),
	}.run(t)
	if strings.Contains(report, "does not report what its subtasks wait on") {
		t.Fatalf("the stall report says nothing of the subtasks:\n%s", report)
	}
	for _, want := range []string{
		`subtask 0\.0 \(events\): did not answer: busy, or blocked outside its input and output .* \(on worker w[12]\)`,
		`subtask 0\.1 \(events\): did not answer: busy, or blocked outside its input and output .* \(on worker w[12]\)`,
		`subtask 1\.0 \(count -> format -> output\): (waiting for input|aligning checkpoint \d+ for .*: waiting for its barrier from subtask 0\.[01] \(events\)).* \(on worker w[12]\)`,
		`subtask 1\.1 \(count -> format -> output\): (waiting for input|aligning checkpoint \d+ for .*: waiting for its barrier from subtask 0\.[01] \(events\)).* \(on worker w[12]\)`,
	} {
		if !regexp.MustCompile(`(?m)^  ` + want + `$`).MatchString(report) {
			t.Errorf("the stall report lacks %q:\n%s", want, report)
		}
	}
}

// With active standbys, a stall report says what each standby waits on,
// as the worker that runs it tells (before, a standby share reported
// nothing, nor the standbys it had promoted).
func TestClusterStallReportSaysWhatActiveStandbysWaitOn(t *testing.T) {
	hs := newHoldingSource(true)
	var report string
	loseAWorker{
		unchained: true,
		standby:   true,
		source: func(s connector.Source[jobs.KeyEvent]) connector.Source[jobs.KeyEvent] {
			hs.Source = s
			return hs
		},
		stall: 2 * time.Second,
		script: func(t *testing.T, c *windowsCluster) {
			c.logs.wait(t, "active standbys of subtasks 1.1, 2.1 on worker w[12]")
			stallAndReport(hs, &report)(t, c)
		},
	}.run(t)
	for _, want := range []string{
		`active standby of subtask 1\.0 \(count\): .* \(on worker w[12]\)`,
		`active standby of subtask 1\.1 \(count\): .* \(on worker w[12]\)`,
		`active standby of subtask 2\.0 \(format\): .* \(on worker w[12]\)`,
		`active standby of subtask 2\.1 \(format\): .* \(on worker w[12]\)`,
	} {
		if !regexp.MustCompile(`(?m)^  ` + want + `$`).MatchString(report) {
			t.Errorf("the stall report lacks %q:\n%s", want, report)
		}
	}
}

// stallAndReport is a scenario's script that, after two completed
// checkpoints, holds the sources until the job stalls and sets *report to
// the stall's report.
func stallAndReport(hs *holdingSource, report *string) func(*testing.T, *windowsCluster) {
	return func(t *testing.T, c *windowsCluster) {
		logs := c.logs
		logs.waitCount(t, "^"+c.job+": checkpoint [0-9]+ completed", 2)
		stalled := "^" + c.job + ": the job made no progress for "
		n := logs.count(stalled) // on a loaded machine, perhaps one before the sources were held
		hs.armed.Store(true)
		hs.waitHeld(t)
		logs.waitCount(t, stalled, n+1)
		logs.mu.Lock()
		defer logs.mu.Unlock()
		for _, l := range logs.lines {
			if regexp.MustCompile(stalled).MatchString(l) {
				*report = l
			}
		}
	}
}
