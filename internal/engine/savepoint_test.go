package engine

import (
	"strings"
	"testing"

	"github.com/weir-stream/weir/internal/task"
)

// A checkpoint that serves a request to drain is triggered drained, and
// one that serves other requests is not: a drain queued with them waits
// for the checkpoint after, so only a drain gets a drained savepoint.
func TestOnlyTheCheckpointOfADrainIsTriggeredDrained(t *testing.T) {
	a := &attemptState{e: &engine{cfg: Config{Log: func(string) {}}}}
	req := func(drain bool) SavepointRequest {
		return SavepointRequest{Dir: "/sp", Stop: drain, Drain: drain, Reply: make(chan SavepointResult, 1)}
	}
	a.e.saveQueue = []pendingSavepoint{{SavepointRequest: req(false)}, {SavepointRequest: req(true)}, {SavepointRequest: req(false)}}

	steps := []struct {
		id     int64
		want   task.TriggerOptions
		served int
	}{
		{3, task.TriggerOptions{Aligned: true}, 2},              // the two others
		{4, task.TriggerOptions{Aligned: true, Drain: true}, 1}, // the drain
		{5, task.TriggerOptions{}, 0},                           // a periodic checkpoint
	}
	for _, s := range steps {
		if got := a.savepointTriggered(s.id); got != s.want || len(a.e.saveFor[s.id]) != s.served {
			t.Fatalf("checkpoint %d: triggered %+v serving %d requests, want %+v serving %d", s.id, got, len(a.e.saveFor[s.id]), s.want, s.served)
		}
	}
	for _, r := range a.e.saveFor[4] {
		if !r.Drain {
			t.Fatalf("the drained checkpoint serves %+v, a request not to drain", r.SavepointRequest)
		}
	}
}

// The abort of a drained savepoint's checkpoint fails its request and
// the attempt: the sources emitted the final watermark, so the job must
// go back to its latest completed checkpoint. The abort of an undrained
// one fails only its request.
func TestTheAbortOfADrainedCheckpointFailsTheAttempt(t *testing.T) {
	for _, drain := range []bool{false, true} {
		a := &attemptState{e: &engine{cfg: Config{Log: func(string) {}}}}
		reply := make(chan SavepointResult, 1)
		a.e.saveQueue = []pendingSavepoint{{SavepointRequest: SavepointRequest{Dir: "/sp", Stop: true, Drain: drain, Reply: reply}}}
		a.savepointTriggered(7)
		a.savepointAborted(7, "expired")
		if r := <-reply; r.Err == nil || !strings.Contains(r.Err.Error(), "checkpoint 7 was aborted") {
			t.Fatalf("drain %v: the request's answer %+v, want the abort", drain, r)
		}
		if failed := a.failure != nil; failed != drain {
			t.Fatalf("drain %v: the attempt's failure is %v, want one only for a drain", drain, a.failure)
		}
	}
}

// A stop asked for without a directory (a cluster's rescale) writes no
// savepoint: the job stops at the checkpoint, which stays in its store,
// and the answer names the checkpoint and no path. The engine here has no
// store, so a copy would fail.
func TestAStopWithoutADirectoryKeepsItsCheckpointInTheStore(t *testing.T) {
	a := &attemptState{e: &engine{cfg: Config{Log: func(string) {}}}}
	reply := make(chan SavepointResult, 1)
	a.e.saveQueue = []pendingSavepoint{{SavepointRequest: SavepointRequest{Stop: true, Reply: reply}}}
	if got := a.savepointTriggered(9); !got.Aligned {
		t.Fatalf("the stop's checkpoint is triggered %+v, want aligned", got)
	}
	if !a.savepointCompleted(9) {
		t.Fatal("the job does not stop after the stop's checkpoint")
	}
	if r := <-reply; r.Err != nil || r.Path != "" || r.Checkpoint != 9 {
		t.Fatalf("the stop's answer is %+v, want checkpoint 9 and no path", r)
	}
	if len(a.e.report.Savepoints) != 0 {
		t.Fatalf("the report lists savepoints %v", a.e.report.Savepoints)
	}
}
