package engine

import (
	"context"
	"fmt"
	"sync"
)

// Deleting the checkpoints beyond the retained ones (Config.Retained) is
// I/O whose cost grows with the tasks: every task wrote a blob for each
// checkpoint. It runs off the attempt's loop, which would otherwise hold
// the acknowledgements of the next checkpoint (and so its completion)
// until the deletion ended: after each completion the loop asks for a
// pass (retainLater), one goroutine runs the passes one at a time, and
// the completions that come while one runs share the next pass. Run
// waits for the passes before it returns.

// retainer runs the passes of an engine's retention.
type retainer struct {
	mu      sync.Mutex
	running bool // a pass runs
	again   bool // a completion came while it ran: one more pass
	wg      sync.WaitGroup
}

// retainLater deletes the checkpoints beyond the retained ones, on the
// retainer's goroutine; it does not wait.
func (e *engine) retainLater() {
	r := &e.retention
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running {
		r.again = true
		return
	}
	r.running = true
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			if _, err := e.cfg.Store.Retain(context.Background(), e.cfg.Job, e.cfg.Retained); err != nil {
				e.cfg.Log(fmt.Sprintf("retaining checkpoints: %v", err))
			}
			r.mu.Lock()
			if !r.again {
				r.running = false
				r.mu.Unlock()
				return
			}
			r.again = false
			r.mu.Unlock()
		}
	}()
}

// awaitRetention waits for the passes of retention under way.
func (e *engine) awaitRetention() { e.retention.wg.Wait() }
