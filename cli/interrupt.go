package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/weir-stream/weir"
)

// ExitInterrupted is the exit status of a command stopped by SIGINT
// (Ctrl-C): 128 plus the signal's number, as shells report it. A command
// stopped by SIGTERM exits 128+15.
const ExitInterrupted = 128 + int(syscall.SIGINT)

// signalCause is the cause of a context cancelled by a signal.
type signalCause struct{ sig os.Signal }

func (s signalCause) Error() string { return "interrupted by " + s.sig.String() }

// notifyContext returns a context cancelled with a signalCause on the
// first SIGINT or SIGTERM. After it, the signals have their default
// effect again, so a second Ctrl-C ends a process that does not stop.
func notifyContext(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			signal.Stop(ch)
			cancel(signalCause{sig})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// interruptedStatus returns the exit status of a command whose context
// ended: 128 plus the signal's number when a signal cancelled it,
// ExitInterrupted otherwise.
func interruptedStatus(ctx context.Context) int {
	var s signalCause
	if errors.As(context.Cause(ctx), &s) {
		if n, ok := s.sig.(syscall.Signal); ok {
			return 128 + int(n)
		}
	}
	return ExitInterrupted
}

// interrupted describes what a run stopped by the user left behind: the
// last completed checkpoint and how to resume from it, or why nothing
// can be resumed.
func interrupted(job string, f *runFlags, r *weir.Report) error {
	var last *weir.CheckpointStats
	if r != nil {
		last = r.LastCompletedCheckpoint
	}
	switch {
	case f.ft.guarantee == "none" || f.ft.guarantee == "":
		return fmt.Errorf("job %q interrupted; it took no checkpoints (--guarantee none), so nothing can be resumed: run it again", job)
	case last == nil:
		return fmt.Errorf("job %q interrupted before its first checkpoint completed; nothing can be resumed: run it again", job)
	case f.ft.stateDir == "":
		return fmt.Errorf("job %q interrupted after checkpoint %d completed, but its checkpoints were kept in memory (no --state-dir), so nothing can be resumed: run it again, with --state-dir DIR to make it resumable", job, last.ID)
	}
	return fmt.Errorf("job %q interrupted; checkpoint %d (taken %s) is the last completed one: the state and output up to it are kept; "+
		"run the same command with --restore latest --state-dir %s to resume from it",
		job, last.ID, last.Triggered.Format(time.TimeOnly), f.ft.stateDir)
}
