package task

import (
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/standbylog"
)

// The input log of a subtask that has an active standby (standby.go) is
// a standbylog.Log held by the runtime: the primary appends every
// element it consumes and its decisions that are not in the input
// (input.go, control.go), marks it at its snapshots (snapshot.go), and
// trims it when a checkpoint completes; the standby reads it; across
// processes it is shipped (standby_remote.go).

// logInput logs element e of channel ch, of which the primary consumes
// records skip to limit, for its standby.
func (s *subtask) logInput(ch int, e exchange.Element, skip, limit int) {
	s.log.Append(standbylog.Entry{Kind: standbylog.Element, Ch: ch, E: e, Skip: skip, Limit: limit})
}

// noteUnsafe tells the log whether a standby could take this primary's
// place now: not while it follows a logged order, holds split batches or
// awaits replays, input a standby would not find in the gate.
func (s *subtask) noteUnsafe() {
	if unsafe := !s.in.Settled(); unsafe != s.unsafe {
		s.unsafe = unsafe
		s.log.SetUnsafe(unsafe)
	}
}
