package task

import (
	"fmt"
	"slices"
	"time"

	"github.com/weir-stream/weir/internal/exchange"
)

// This file is barrier alignment at a subtask with inputs: the barriers
// of a checkpoint arriving on each channel, in the aligned, unaligned and
// at-least-once modes; the in-flight records an unaligned checkpoint
// keeps; aborted alignments; and the check that a barrier comes after
// exactly the records its sender sent before it.

// alignment tracks the barriers of one checkpoint at a task with inputs.
//
// Aligned: each input is blocked once its barrier arrived; the snapshot is
// taken when all arrived. Unaligned: the first barrier (which overtook its
// channel's queue) takes the snapshot at once and forwards the barrier
// ahead of the output; the records each channel still delivers before its
// own barrier are kept as in-flight data. An aligned checkpoint that waits
// longer than the aligned timeout switches to the unaligned way.
type alignment struct {
	id      int64
	seen    []bool
	started time.Time
	// frozen is set once the snapshot was taken before all barriers
	// arrived (unaligned, or after the aligned timeout).
	frozen *frozen
	// inflight holds, per channel, the records delivered after the
	// snapshot and before the channel's barrier; count their records.
	inflight [][]*exchange.Buffer
	count    []int64
}

// onBarrier handles barrier e arriving on channel ch.
func (s *subtask) onBarrier(ch int, e exchange.Element) {
	a := s.align
	if a != nil && e.Checkpoint < a.id {
		return // a barrier of a checkpoint we already gave up
	}
	if a != nil && e.Checkpoint > a.id {
		// A newer checkpoint overtook an unfinished alignment: the older
		// one cannot complete here; give it up as Flink does.
		s.abortAlignment()
		a = nil
	}
	if a == nil && (e.Checkpoint <= s.lastCheckpoint || slices.Contains(s.aborted, e.Checkpoint)) {
		// Taken already, or aborted: an alignment started now could not
		// complete, as the barriers that came before the abort were
		// consumed, and its blocked channels would hold the job up.
		return
	}
	if a == nil {
		a = &alignment{id: e.Checkpoint, seen: make([]bool, len(s.chanState)), started: s.rt.opts.Now()}
		s.align = a
		if e.Unaligned {
			s.startInflight(a, true)
			if a.frozen == nil {
				return
			}
		}
	}
	if e.Unaligned && a.frozen != nil {
		// The records this barrier overtook are in flight.
		for _, b := range s.gate.AheadOfMarker(ch, e.Checkpoint) {
			a.inflight[ch] = append(a.inflight[ch], b)
			a.count[ch] += int64(b.N)
		}
	}
	a.seen[ch] = true
	if s.rt.opts.Checkpoint == Aligned && a.frozen == nil {
		s.gate.Block(ch)
	}
	s.maybeAligned()
	if s.align != nil {
		if err := s.inject(PointAlignment, a.id); err != nil {
			Fail(err)
		}
	}
}

// startInflight takes the snapshot before all barriers arrived and starts
// keeping in-flight records; priority says whether barriers overtake
// queues (unaligned) or follow them (a switch after the aligned timeout).
func (s *subtask) startInflight(a *alignment, priority bool) {
	a.frozen = s.freeze(a.id, s.rt.opts.Now().Sub(a.started), true, priority)
	if a.frozen == nil {
		s.abortAlignment() // the channels blocked so far read on
		return
	}
	a.inflight = make([][]*exchange.Buffer, len(s.chanState))
	a.count = make([]int64, len(s.chanState))
	for c, seen := range a.seen {
		if seen {
			s.gate.Unblock(c)
		}
	}
}

// checkAlignedTimeout switches a long alignment to the unaligned way.
func (s *subtask) checkAlignedTimeout() {
	a := s.align
	t := s.rt.opts.AlignedTimeout
	if a == nil || a.frozen != nil || t <= 0 || s.rt.opts.Checkpoint != Aligned {
		return
	}
	if s.rt.opts.Now().Sub(a.started) >= t {
		s.startInflight(a, false)
		s.maybeAligned()
	}
}

// maybeAligned completes the alignment once every channel that has not
// ended delivered the barrier.
func (s *subtask) maybeAligned() {
	a := s.align
	if a == nil {
		return
	}
	for c, seen := range a.seen {
		if !seen && s.chanState[c] != ended {
			return
		}
	}
	s.align = nil
	if a.frozen != nil {
		s.reportFrozen(a.frozen, a.inflight, a.count)
		return
	}
	waited := s.rt.opts.Now().Sub(a.started)
	s.takeSnapshot(a.id, waited, true)
	for c := range a.seen {
		s.gate.Unblock(c)
	}
}

// abortCheckpoint gives up checkpoint id, which the job aborted: its
// alignment, a barrier a restarted source deferred, and the barriers of
// it still to come (onBarrier).
func (s *subtask) abortCheckpoint(id int64) {
	if id > s.lastCheckpoint && !slices.Contains(s.aborted, id) {
		s.aborted = append(s.aborted, id)
	}
	if s.align != nil && s.align.id == id {
		s.abortAlignment()
	}
	if s.deferred == id {
		s.deferred = 0
	}
}

// abortAlignment gives up the current alignment and unblocks all inputs.
func (s *subtask) abortAlignment() {
	if s.align == nil {
		return
	}
	for c := range s.align.seen {
		s.gate.Unblock(c)
	}
	s.align = nil
}

// recordInflight keeps a copy of a data buffer delivered on ch between a
// snapshot taken before all barriers arrived and ch's barrier.
func (s *subtask) recordInflight(ch int, b *exchange.Buffer) {
	a := s.align
	if a == nil || a.frozen == nil || a.seen[ch] {
		return
	}
	a.inflight[ch] = append(a.inflight[ch], &exchange.Buffer{B: append([]byte(nil), b.B...), N: b.N})
	a.count[ch] += int64(b.N)
}

// checkBarrierSeq fails the subtask if barrier e on channel ch comes from
// a sender that is behind what the subtask consumed, or ahead of it
// (records sent before the barrier never reached the subtask): either
// way the checkpoint would not be a consistent cut.
func (s *subtask) checkBarrierSeq(ch int, e exchange.Element) {
	if e.Unaligned || e.Seq == s.recv[ch] {
		return
	}
	ic := s.inChan[ch]
	from := s.rt.edges[ic.Edge].Source.Name()
	if e.Seq < s.recv[ch] {
		Fail(fmt.Errorf("the barrier of checkpoint %d from subtask %d of %q comes after record %d, but %d records were consumed from it",
			e.Checkpoint, ic.From, from, e.Seq, s.recv[ch]))
	}
	Fail(fmt.Errorf("records %d to %d on the channel from subtask %d of %q are missing (the barrier of checkpoint %d comes after record %d)",
		s.recv[ch], e.Seq-1, ic.From, from, e.Checkpoint, e.Seq))
}
