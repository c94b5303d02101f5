package input

import (
	"fmt"
	"slices"
)

// alignment tracks the barriers of one checkpoint.
//
// Aligned: each channel is blocked once its barrier arrived; the snapshot
// is taken when every channel that has not ended delivered it. Unaligned:
// the first barrier, which overtook its channel's queue, takes the
// snapshot at once and is sent on ahead of the output; the records each
// channel delivers before its own barrier are in-flight input. An aligned
// checkpoint that waited longer than the aligned timeout switches to the
// unaligned way, its barriers still in order. A checkpoint whose
// barriers are MustAlign (a savepoint's) is aligned in both exactly-once
// modes and never switches, so that its snapshot holds no in-flight
// input. At least once: nothing is blocked; the snapshot is taken when
// the last barrier arrived.
type alignment struct {
	id   int64
	seen []bool
	// mustAlign is set when the checkpoint's barriers are MustAlign.
	mustAlign bool
	// frozen is set once the snapshot was taken before all barriers
	// arrived; base holds the records consumed then, inflight those
	// counted as in-flight input since, per channel.
	frozen   bool
	base     []int64
	inflight []int64
	// endedAfter are, at least once, the channels that ended after their
	// barrier (nil if none): the snapshot records them as not ended, as
	// their senders' snapshots, taken at the barrier, have records still
	// to send.
	endedAfter []bool
}

// endAfterBarrier notes that channel ch ended: at least once, a channel
// goes on after its barrier, and its end then is not the snapshot's.
func (p *Protocol) endAfterBarrier(ch int) {
	a := p.align
	if a == nil || p.mode != AtLeastOnce || !a.seen[ch] {
		return
	}
	if a.endedAfter == nil {
		a.endedAfter = make([]bool, len(p.chans))
	}
	a.endedAfter[ch] = true
}

// barrier handles barrier e on channel ch.
func (p *Protocol) barrier(ch int, e Element) {
	c := &p.chans[ch]
	if e.Seq != c.recv && (!e.Unaligned || e.Seq < c.recv) {
		// An unaligned barrier's records may still be queued ahead of it.
		if e.Seq < c.recv {
			p.fail(ch, fmt.Errorf("%w on input channel %d: the barrier of checkpoint %d comes after %d records, but %d were consumed",
				ErrBarrierBehind, ch, e.Checkpoint, e.Seq, c.recv))
		} else {
			p.fail(ch, fmt.Errorf("%w on input channel %d: records %d to %d (the barrier of checkpoint %d comes after %d records)",
				ErrRecordsMissing, ch, c.recv, e.Seq-1, e.Checkpoint, e.Seq))
		}
		return
	}
	a := p.align
	if a != nil && e.Checkpoint < a.id {
		return // a barrier of a checkpoint given up already
	}
	if a != nil && e.Checkpoint > a.id {
		// A newer checkpoint overtook an unfinished alignment: the older
		// one cannot complete here; give it up as Flink does.
		p.abortAlignment()
		a = nil
	}
	if a == nil && (e.Checkpoint <= p.last || slices.Contains(p.aborted, e.Checkpoint)) {
		// Taken already, or aborted: an alignment started now could not
		// complete, as the barriers that came before the abort were
		// consumed, and its blocked channels would hold the job up.
		return
	}
	if a == nil {
		a = &alignment{id: e.Checkpoint, seen: make([]bool, len(p.chans)), mustAlign: e.MustAlign}
		p.align = a
		p.emit(Action{Kind: Align, Checkpoint: a.id})
		if e.Unaligned && !p.freeze(a, Ahead) {
			return
		}
	}
	if e.Unaligned && a.frozen && e.Seq > c.recv {
		// The records this barrier overtook are in flight.
		p.emit(Action{Kind: KeepQueued, Ch: ch, Checkpoint: a.id, From: c.recv, To: e.Seq})
		a.inflight[ch] += e.Seq - c.recv
	}
	a.seen[ch] = true
	p.maybeAligned()
	if p.align == a && p.blocks(a) && !a.frozen {
		c.blocked = true
		p.emit(Action{Kind: Block, Ch: ch})
	}
}

// maybeAligned completes the alignment once every channel that has not
// ended delivered its barrier.
func (p *Protocol) maybeAligned() {
	a := p.align
	if a == nil {
		return
	}
	for c, seen := range a.seen {
		if !seen && p.chans[c].state != ChanEnded {
			return
		}
	}
	p.align = nil
	if a.frozen {
		counts := make([]int64, len(a.base))
		for c := range counts {
			counts[c] = a.base[c] + a.inflight[c]
		}
		p.emit(Action{Kind: Report, Checkpoint: a.id, Counts: counts})
		return
	}
	p.takeSnapshot(a.id, a.mustAlign, a.endedAfter)
	p.unblockAll()
}

// blocks says whether alignment a blocks each channel after its barrier:
// in Aligned mode, and for a checkpoint that must be aligned in
// Unaligned mode too.
func (p *Protocol) blocks(a *alignment) bool {
	return p.mode == Aligned || p.mode == Unaligned && a.mustAlign
}

// takeSnapshot takes checkpoint id's snapshot and reports it at once;
// mustAlign says its barriers are MustAlign, and are sent on so;
// endedAfter are the channels it records as not ended (alignment).
func (p *Protocol) takeSnapshot(id int64, mustAlign bool, endedAfter []bool) {
	fwd := InOrder
	switch {
	case mustAlign:
		fwd = MustAlign
	case p.mode == Unaligned:
		fwd = Ahead
	}
	if p.snapshot(id, fwd, endedAfter) {
		p.emit(Action{Kind: Report, Checkpoint: id, Counts: p.Counts()})
	}
}

// freeze takes alignment a's snapshot before all its barriers arrived
// and starts counting in-flight input; it reports whether it did (and
// gives the alignment up otherwise).
func (p *Protocol) freeze(a *alignment, fwd Forward) bool {
	if !p.snapshot(a.id, fwd, nil) {
		p.align = nil
		p.unblockAll()
		return false
	}
	a.frozen = true
	a.base = p.Counts()
	a.inflight = make([]int64, len(p.chans))
	p.unblockAll()
	return true
}

// snapshot emits checkpoint id's Snapshot, or declines it while the
// output catches up; it reports whether it emitted the Snapshot. The
// channels endedAfter names are recorded as active, not ended.
func (p *Protocol) snapshot(id int64, fwd Forward, endedAfter []bool) bool {
	p.last = id
	p.aborted = slices.DeleteFunc(p.aborted, func(a int64) bool { return a <= id })
	if p.behind {
		if p.finished {
			p.fail(-1, fmt.Errorf("%w, at checkpoint %d", ErrFinishedBehind, id))
			return false
		}
		p.emit(Action{Kind: Decline, Checkpoint: id, Err: ErrCatchingUp})
		return false
	}
	if p.finished {
		fwd = NoBarrier
	}
	w := p.Watermarks()
	for c, after := range endedAfter {
		if after {
			w.Channels[c].State = ChanActive
		}
	}
	p.emit(Action{Kind: Snapshot, Checkpoint: id, Counts: p.Counts(), Forward: fwd, Watermarks: w})
	return true
}

func (p *Protocol) unblockAll() {
	for c := range p.chans {
		if p.chans[c].blocked {
			p.chans[c].blocked = false
			p.emit(Action{Kind: Unblock, Ch: c})
		}
	}
}

// abortAlignment gives up the current alignment.
func (p *Protocol) abortAlignment() {
	a := p.align
	if a == nil {
		return
	}
	p.align = nil
	if a.frozen {
		p.emit(Action{Kind: DropSnapshot, Checkpoint: a.id})
	}
	p.unblockAll()
}

// Abort gives up checkpoint id, which the job aborted: its alignment,
// and the barriers of it still to come.
func (p *Protocol) Abort(id int64) []Action {
	p.out = p.out[:0]
	if id > p.last && !slices.Contains(p.aborted, id) {
		p.aborted = append(p.aborted, id)
	}
	if p.align != nil && p.align.id == id {
		p.abortAlignment()
	}
	return p.out
}

// AlignedTimeout says the alignment of checkpoint id waited longer than
// the aligned timeout: in Aligned mode it takes the snapshot now and
// keeps the records the remaining barriers come after as in-flight
// input. It does nothing if that alignment ended or switched already,
// or if its barriers are MustAlign: that checkpoint waits for them all.
func (p *Protocol) AlignedTimeout(id int64) []Action {
	p.out = p.out[:0]
	a := p.align
	if a == nil || a.id != id || a.frozen || a.mustAlign || p.mode != Aligned {
		return p.out
	}
	if p.freeze(a, InOrder) {
		p.maybeAligned()
	}
	return p.out
}

// Trigger takes checkpoint id's snapshot at once, if the subtask finished
// and id is newer than the last: a finished subtask's final state belongs
// to the checkpoints triggered after it finished. A subtask that has not
// finished does nothing: the trigger was meant for an incarnation that
// finished and was restarted since, and id's barriers are on their way.
// A snapshot taken now would not be a cut through the senders' barriers
// (records they sent before their barrier would be in neither their
// retained output nor this snapshot), and with an alignment of id under
// way it would be taken a second time when that alignment ends.
func (p *Protocol) Trigger(id int64) []Action {
	p.out = p.out[:0]
	if p.finished && id > p.last {
		p.takeSnapshot(id, false, nil)
	}
	return p.out
}

// SnapshotFailed says the shell could not take checkpoint id's snapshot
// (and declined it): an alignment that went on after it is given up.
func (p *Protocol) SnapshotFailed(id int64) []Action {
	p.out = p.out[:0]
	if a := p.align; a != nil && a.id == id {
		a.frozen = false // nothing to drop
		p.abortAlignment()
	}
	return p.out
}

// CatchingUp says whether the subtask's output is behind what its
// previous incarnation had sent. While it is, the subtask declines its
// checkpoints: its snapshot would miss output its consumers' snapshots
// reflect. It cannot wait at the barriers instead, as what it still has
// to send may depend on input behind them.
func (p *Protocol) CatchingUp(on bool) { p.behind = on }
