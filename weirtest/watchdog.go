package weirtest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/weir-stream/weir"
)

// ErrHung is the error of a run the watchdog stopped.
var ErrHung = errors.New("the job hung")

// DefaultStallBound is how long a watched run may make no progress: far
// longer than any pause of the harness's small jobs, even on a loaded
// machine.
const DefaultStallBound = 20 * time.Second

// DefaultRunTimeout is how long a watched run of the harness may take in
// all. It is a backstop only: what fails a hung run is that it makes no
// progress for its stall bound. A run of the busiest jobs under the
// pebble backend, with failures injected, took over a minute while two
// copies of the whole suite ran on two cores, so the bound is far above
// any run's length on a loaded machine.
const DefaultRunTimeout = 10 * time.Minute

// Watchdog stops a run that hangs, so that a test fails with who waits
// on whom instead of waiting for go test's timeout. A run hangs when the
// job makes no progress for the bound (weir.WithStallTimeout: no record
// moved, no checkpoint completed, no task finished or restarted), or
// when it has not ended by its deadline. Either way the run's error
// carries the job's report of what each subtask waits on (when the job
// could tell) and the stacks of all goroutines.
type Watchdog struct {
	bound time.Duration

	mu     sync.Mutex
	report string
	stacks string
	cancel context.CancelFunc
}

// NewWatchdog returns a watchdog that stops a run making no progress for
// bound (DefaultStallBound when 0).
func NewWatchdog(bound time.Duration) *Watchdog {
	if bound <= 0 {
		bound = DefaultStallBound
	}
	return &Watchdog{bound: bound}
}

// Option is the pipeline option through which the job tells the watchdog
// that it stalled. Add it to the pipeline Run runs.
func (w *Watchdog) Option() weir.Option { return weir.WithStallTimeout(w.bound, w.stalled) }

func (w *Watchdog) stalled(report string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.report != "" {
		return
	}
	w.report, w.stacks = report, allStacks()
	if w.cancel != nil {
		w.cancel()
	}
}

// Run runs p until it ends, stalls, or timeout passes. A stalled or
// timed-out run returns an error wrapping ErrHung with the report and the
// goroutine stacks taken at that moment.
func (w *Watchdog) Run(ctx context.Context, p *weir.Pipeline, timeout time.Duration) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w.mu.Lock()
	w.cancel = cancel
	w.mu.Unlock()
	deadline := time.AfterFunc(timeout, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.report == "" {
			w.report = fmt.Sprintf("the job did not end within %v (it did not report a stall)", timeout)
			w.stacks = allStacks()
		}
		cancel()
	})
	defer deadline.Stop()
	err := p.Run(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.report != "" {
		return fmt.Errorf("%w (run ended with: %v)\n%s\n\ngoroutines:\n%s", ErrHung, err, w.report, w.stacks)
	}
	return err
}

// allStacks returns the stacks of every goroutine.
func allStacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}
