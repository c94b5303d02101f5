package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/task"
)

// This file is the engine's side of savepoints: a user's request starts
// a checkpoint at once, an aligned one whatever the job's checkpoint
// mode (savepointTriggered), and when it completes the engine copies it
// into a savepoint (store.ExportSavepoint) that no retention deletes; a
// request to stop then ends the job once the sinks committed it. A
// request to drain marks its checkpoint's trigger so that the sources
// emit the final watermark before its barrier (task.TriggerOptions).

// SavepointRequest asks a running job for a savepoint.
type SavepointRequest struct {
	// Dir is where the savepoint's directory goes: a directory or a blob
	// URL, as --state-dir takes them. Empty with Stop: no copy is
	// written; the job stops at the checkpoint, which stays in its own
	// checkpoint store (the newest there, so --restore latest takes it),
	// and the result's Path is empty. A cluster's rescale stops a job so.
	Dir string
	// Stop ends the job after the savepoint: once it completed and every
	// sink committed it, the job stops (Run returns nil), so its output
	// ends exactly at the savepoint for transactional sinks.
	Stop bool
	// Drain has the sources emit the final watermark
	// (dataflow.MaxWatermark) right before the savepoint's barrier, so
	// every event-time window and timer fires and its output is part of
	// what the sinks commit with the savepoint; the job then stops as
	// with Stop, which Drain implies. A drained savepoint is meant for
	// ending a job for good: a run restored from it takes every later
	// record as late. Should its checkpoint abort, the attempt fails
	// (its sources already emitted the final watermark) and the job
	// restarts from its latest completed checkpoint, as its restart
	// strategy allows.
	Drain bool
	// Reply receives the one result; it must have room for it (the
	// engine never blocks on it).
	Reply chan<- SavepointResult
}

// SavepointResult is the outcome of a SavepointRequest.
type SavepointResult struct {
	// Path is the savepoint's location, for --restore.
	Path string
	// Checkpoint is the id of the checkpoint the savepoint copies.
	Checkpoint int64
	// Bytes is the savepoint's size.
	Bytes int64
	// Duration is the time from the request to the savepoint written.
	Duration time.Duration
	Err      error
}

// ErrNotRunning means a savepoint was asked of a job that is not
// running.
var ErrNotRunning = errors.New("the job is not running")

// ErrNoSavepoints means the job takes no checkpoints (guarantee
// at-most-once or none), so it cannot take a savepoint.
var ErrNoSavepoints = errors.New("savepoints need checkpoints: run the job with --guarantee exactly-once or at-least-once")

// pendingSavepoint is a request with its arrival time.
type pendingSavepoint struct {
	SavepointRequest
	at time.Time
}

// requestSavepoint takes a request into the queue and triggers its
// checkpoint if none is in flight.
func (a *attemptState) requestSavepoint(r SavepointRequest) {
	e := a.e
	if a.coord == nil {
		r.Reply <- SavepointResult{Err: ErrNoSavepoints}
		return
	}
	e.saveQueue = append(e.saveQueue, pendingSavepoint{r, time.Now()})
	a.triggerSavepoint()
}

// triggerSavepoint triggers a checkpoint for the queued requests, unless
// one is in flight (the next tick tries again).
func (a *attemptState) triggerSavepoint() {
	e := a.e
	if len(e.saveQueue) == 0 || a.coord == nil || a.rescale != nil {
		return // a rescale under way: its checkpoint is its own
	}
	if acts, err := a.coord.TriggerNow(); err == nil {
		a.act(acts) // triggered: takes the queue (savepointTriggered)
	}
}

// savepointTriggered hands the queued requests to checkpoint id, about
// to be triggered: any checkpoint triggered after a request serves it, a
// periodic one too. It answers how id is triggered. A checkpoint that
// serves requests must be aligned, even in a job of unaligned
// checkpoints or with an aligned timeout, so that the savepoint holds no
// in-flight records and restores at any parallelism and into a changed
// job. A periodic checkpoint that serves a request is aligned too
// (rather than the request waiting for a trigger of its own), so a
// request is served by the next checkpoint, as in a job of aligned
// checkpoints; one that serves a request to drain is drained. Requests
// to drain wait while others are queued: those take id, undrained, and
// the drain the checkpoint after it, so only a drain gets a drained
// savepoint.
func (a *attemptState) savepointTriggered(id int64) task.TriggerOptions {
	e := a.e
	if len(e.saveQueue) == 0 || a.rescale != nil {
		return task.TriggerOptions{} // a rescale's checkpoint serves no savepoint
	}
	var serve, wait []pendingSavepoint
	for _, r := range e.saveQueue {
		if r.Drain {
			wait = append(wait, r)
		} else {
			serve = append(serve, r)
		}
	}
	drain := len(serve) == 0
	if drain {
		serve, wait = wait, nil
	}
	if e.saveFor == nil {
		e.saveFor = map[int64][]pendingSavepoint{}
	}
	e.saveFor[id] = serve
	e.saveQueue = wait
	if drain {
		e.cfg.Log(fmt.Sprintf("checkpoint %d drains the job: its sources emit the final watermark before its barrier", id))
	}
	return task.TriggerOptions{Aligned: true, Drain: drain}
}

// savepointCompleted writes the savepoints asked of checkpoint id, which
// completed (e.latest), and answers their requests. It reports whether
// one of them asked the job to stop.
func (a *attemptState) savepointCompleted(id int64) (stop bool) {
	e := a.e
	reqs := e.saveFor[id]
	delete(e.saveFor, id)
	for _, r := range reqs {
		if r.Dir == "" && r.Stop {
			e.cfg.Log(fmt.Sprintf("stopping at checkpoint %d, which stays in the checkpoint store", id))
			r.Reply <- SavepointResult{Checkpoint: id, Duration: time.Since(r.at)}
			stop = true
			continue
		}
		path, size, err := e.cfg.Store.ExportSavepoint(context.Background(), *e.latest, r.Dir)
		res := SavepointResult{Path: path, Checkpoint: id, Bytes: size, Duration: time.Since(r.at), Err: err}
		if err == nil {
			e.cfg.Log(fmt.Sprintf("savepoint of checkpoint %d written to %s (%d bytes, %v)", id, path, size, res.Duration.Round(time.Millisecond)))
			e.report.Savepoints = append(e.report.Savepoints, path)
			stop = stop || r.Stop
		}
		// A drained job stops even if the copy failed: its state is past
		// every event-time window, so running on would only take late
		// records; the checkpoint stays in the job's checkpoint store.
		stop = stop || r.Drain
		r.Reply <- res
	}
	return stop
}

// savepointAborted fails the requests of checkpoint id, which aborted.
// The abort of a drained checkpoint fails the attempt: its sources
// emitted the final watermark, so the job restarts from its latest
// completed checkpoint.
func (a *attemptState) savepointAborted(id int64, reason string) {
	e := a.e
	drained := false
	for _, r := range e.saveFor[id] {
		r.Reply <- SavepointResult{Checkpoint: id, Err: fmt.Errorf("the savepoint's checkpoint %d was aborted: %s", id, reason)}
		drained = drained || r.Drain
	}
	delete(e.saveFor, id)
	if drained && a.failure == nil {
		a.failure = fmt.Errorf("the drained savepoint's checkpoint %d was aborted (%s) after its sources emitted the final watermark", id, reason)
	}
}

// requeueSavepoints puts the requests whose checkpoint a failed attempt
// left unfinished back into the queue, for the next attempt to trigger.
func (e *engine) requeueSavepoints() {
	for id, reqs := range e.saveFor {
		e.saveQueue = append(e.saveQueue, reqs...)
		delete(e.saveFor, id)
	}
}

// failSavepoints answers every request still open when the run ends.
func (e *engine) failSavepoints(err error) {
	if err == nil {
		err = errors.New("the job ended before the savepoint was taken")
	}
	e.requeueSavepoints()
	for _, r := range e.saveQueue {
		r.Reply <- SavepointResult{Err: fmt.Errorf("no savepoint: %w", err)}
	}
	e.saveQueue = nil
}

// Committer is an optional ability of an Executor: waiting until every
// sink handled a checkpoint's completion (task.Runtime.AwaitCompleted).
// The engine stops a job after a savepoint only then; an executor
// without it is stopped right after the completion is sent.
type Committer interface {
	AwaitCompleted(ctx context.Context, id int64) error
}

// awaitCommits starts the wait for the sinks' commits of the stop's
// savepoint, checkpoint a.stopAt, on a goroutine the attempt owns: the
// loop goes on taking the subtasks' reports meanwhile, since a sink that
// finishes its input tells the job before it takes the next message (a
// wait in the loop deadlocked with it). Without Committer it ends at once.
func (a *attemptState) awaitCommits(ctx context.Context) {
	a.committed = make(chan error, 1)
	c, ok := a.rt.(Committer)
	if !ok {
		a.committed <- nil
		return
	}
	a.runs.Add(1)
	go func() {
		defer a.runs.Done()
		a.committed <- c.AwaitCompleted(ctx, a.stopAt)
	}()
}

// stoppedAfterSavepoint ends the attempt once the sinks committed the
// stop's savepoint (err nil), or with the wait's error.
func (a *attemptState) stoppedAfterSavepoint(err error) error {
	if err != nil {
		return err
	}
	a.e.cfg.Log(fmt.Sprintf("stopped after the savepoint of checkpoint %d", a.stopAt))
	a.e.report.Stopped = true
	return nil
}
