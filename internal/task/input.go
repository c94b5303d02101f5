package task

import (
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/input"
	"github.com/weir-stream/weir/internal/standbylog"
)

// This file is the shell around the input protocol of a subtask with
// inputs (internal/input, which decides): it hands the protocol each
// element it takes from its gate (or, at an active standby, from its
// primary's input log) and carries out the actions the protocol answers
// with: records into the chain, blocks on the gate, snapshots and their
// barriers, watermarks and idleness, replay requests, the end of input,
// failures.

// newInput returns the input protocol of a subtask with n input
// channels.
func (s *subtask) newInput(n int) (*input.Protocol, error) {
	mode := input.Aligned
	switch s.rt.opts.Checkpoint {
	case Unaligned:
		mode = input.Unaligned
	case AtLeastOnce:
		mode = input.AtLeastOnce
	}
	return input.New(input.Config{Channels: n, Mode: mode})
}

// inputElement returns what the protocol sees of gate element e (not a
// Marker): the element without its records.
func inputElement(e exchange.Element) input.Element {
	switch e.Kind {
	case exchange.Data:
		return input.Element{Kind: input.Data, Seq: e.Seq, N: e.Buf.N}
	case exchange.Watermark:
		return input.Element{Kind: input.Watermark, Time: e.Time}
	case exchange.Idle:
		return input.Element{Kind: input.Idle}
	case exchange.Barrier:
		return input.Element{Kind: input.Barrier, Seq: e.Seq, Checkpoint: e.Checkpoint, Unaligned: e.Unaligned, MustAlign: e.MustAlign}
	case exchange.End:
		return input.Element{Kind: input.End}
	case exchange.Replay:
		return input.Element{Kind: input.Replay, Seq: e.Seq, Incarnation: e.Checkpoint}
	case exchange.Latency:
		return input.Element{Kind: input.Latency}
	}
	panic(fmt.Sprintf("task: no input element for a %v", e.Kind))
}

// next returns the next element to hand to the protocol, from where it
// says to read: the rest of a batch the subtask holds for a channel, what
// it stashed of that channel (stash.go), that channel's queue, or the
// gate's next element. ok is false when nothing is there yet; ch is then
// the channel waited for, if one is.
func (s *subtask) next() (int, exchange.Element, bool) {
	ch, only := s.in.Next()
	if !only {
		if s.stash.following { // the logged order was just repeated
			s.unstash()
		}
		return s.gate.Poll()
	}
	if p := s.pending[ch]; p.Buf != nil {
		s.pending[ch] = exchange.Element{}
		return ch, p, true
	}
	if e, ok := s.fromStash(ch); ok {
		return ch, e, true
	}
	e, ok := s.gate.PollChannel(ch)
	return ch, e, ok
}

// step hands element e, taken from gate channel ch, to the protocol,
// logs it for an active standby if the subtask consumes it, and carries
// out the protocol's actions. done is set when the input ended.
func (s *subtask) step(ch int, e exchange.Element) (done bool, err error) {
	if e.Kind == exchange.Marker {
		s.held.on = false
		return false, nil // the place of a barrier that overtook this channel's queue
	}
	ie := inputElement(e)
	if e.Kind == exchange.Barrier && e.Unaligned {
		ie.Seq = s.overtakenBy(ch, e.Checkpoint)
		e.Seq = ie.Seq
	}
	if e.Kind == exchange.Barrier || e.Kind == exchange.End {
		s.noteCatchingUp()
	}
	awaits := s.in.Awaits(ch)
	acts := s.in.Step(ch, ie)
	consumed, failing := !awaits, false
	for i := range acts {
		switch acts[i].Kind {
		case input.Discard:
			consumed = false
		case input.Fail:
			consumed, failing = false, true
		}
	}
	if s.log != nil {
		s.logStep(ch, e, acts, consumed)
		// An element that fails the subtask was not consumed: it goes
		// back to the gate for the standby (unpollHeld).
		s.held.on = failing
	}
	if done, err = s.act(ch, e, acts); done || err != nil {
		return done, err
	}
	s.overtaken = nil
	if e.Kind == exchange.Watermark || e.Kind == exchange.Idle || e.Kind == exchange.End {
		_, h := s.in.Watermark()
		s.tctx.Metrics.HeldBackBy.Store(int64(h))
	}
	if consumed && e.Kind == exchange.Barrier && s.in.Aligning() != 0 {
		if err := s.inject(PointAlignment, s.in.Aligning()); err != nil {
			Fail(err)
		}
	}
	if consumed && len(s.procs) > 0 {
		s.fireProcessingTimers()
	}
	return false, nil
}

// logStep logs for the active standby what the protocol's answer acts
// show the subtask consumed of element e: the records it delivers, or a
// control element, and where a replay started.
func (s *subtask) logStep(ch int, e exchange.Element, acts []input.Action, consumed bool) {
	for i := range acts {
		switch a := &acts[i]; a.Kind {
		case input.ReplayStarted:
			s.log.Append(standbylog.Entry{Kind: standbylog.ReplayStart, Ch: ch, E: exchange.Element{Seq: a.From}})
		case input.Deliver:
			s.logInput(ch, e, a.Skip, a.Limit)
			return
		}
	}
	if consumed && e.Kind != exchange.Data {
		s.logInput(ch, e, 0, 0)
	}
}

// applyLogged applies one entry of the primary's input log to a standby,
// whose protocol decides as its primary's did from the same input and
// the same decisions; done is set when the input ended.
func (s *subtask) applyLogged(en standbylog.Entry) (done bool, err error) {
	switch en.Kind {
	case standbylog.Abort:
		s.act(-1, exchange.Element{}, s.in.Abort(en.Checkpoint))
	case standbylog.ReplayStart:
		s.in.Resume(en.Ch, en.E.Seq)
	case standbylog.Element:
		if en.E.Kind == exchange.Marker {
			return false, nil
		}
		ie := inputElement(en.E)
		if en.E.Kind == exchange.Data {
			ie.N = en.Limit // the primary consumed the rest of a split batch later
		}
		if done, err = s.act(en.Ch, en.E, s.in.Step(en.Ch, ie)); done || err != nil {
			return done, err
		}
		if len(s.procs) > 0 {
			s.fireProcessingTimers()
		}
	}
	return false, nil
}

// overtakenBy returns the position of the marker of checkpoint id's
// unaligned barrier on channel ch: the records before it, consumed,
// held or still queued ahead of it. It keeps copies of those queued, the
// barrier's in-flight input if the protocol asks for them (KeepQueued).
func (s *subtask) overtakenBy(ch int, id int64) int64 {
	bufs, next := s.gate.AheadOfMarker(ch, id)
	s.overtaken = bufs
	seq := max(s.in.Consumed(ch), next)
	if p := s.pending[ch]; p.Buf != nil {
		seq = max(seq, p.Seq+int64(p.Buf.N))
	}
	return seq
}

// noteCatchingUp tells the protocol whether the subtask, restarted alone,
// has yet to send what its previous incarnation had: it then declines
// its checkpoints.
func (s *subtask) noteCatchingUp() {
	if s.catchUp != nil {
		s.in.CatchingUp(s.catchingUp())
	}
}

// act carries out the protocol's actions on element e of gate channel ch
// (none for the actions of a control message); done is set when the
// input ended.
func (s *subtask) act(ch int, e exchange.Element, acts []input.Action) (done bool, err error) {
	failed := int64(-1) // a checkpoint whose snapshot could not be taken
	for i := range acts {
		a := &acts[i]
		switch a.Kind {
		case input.Deliver:
			if err := s.deliver(ch, e, a); err != nil {
				return false, err
			}
		case input.Discard:
			s.tctx.Metrics.Duplicates.Add(a.Duplicates)
			exchange.PutBuffer(e.Buf)
		case input.ForwardLatency:
			s.tctx.Metrics.Latency.Observe(s.rt.opts.Now().Sub(time.Unix(0, e.Time)))
			s.forwardLatency(e)
		case input.Block:
			s.gate.Block(a.Ch)
		case input.Unblock:
			s.gate.Unblock(a.Ch)
		case input.Advance:
			s.advance(a.Watermark)
		case input.GoIdle:
			if s.idler == nil {
				s.idle = true
				s.emit(exchange.Element{Kind: exchange.Idle})
			}
		case input.GoActive:
			if s.idler == nil {
				s.idle = false
				s.emitWatermark(s.outWM)
			}
		case input.Align:
			s.alignID, s.alignStart = a.Checkpoint, s.rt.opts.Now()
		case input.Snapshot:
			if !s.takeInputSnapshot(a) {
				failed = a.Checkpoint
			}
		case input.KeepQueued:
			if f := s.taking; f != nil && f.id == a.Checkpoint {
				for _, b := range s.overtaken {
					s.keepInflight(a.Ch, b)
				}
			}
		case input.Report:
			if f := s.taking; f != nil && f.id == a.Checkpoint {
				s.taking = nil
				k := len(f.counts) - len(a.Counts) // the receivers' counts come last (channelCounts)
				for c, n := range a.Counts {
					f.counts[k+c].N = n
				}
				s.reportFrozen(f, s.inflight)
				s.inflight = nil
			}
		case input.DropSnapshot:
			if f := s.taking; f != nil && f.id == a.Checkpoint {
				s.taking, s.inflight = nil, nil
			}
		case input.Decline:
			s.disarmAlign(a.Checkpoint)
			s.report(SnapshotResult{Checkpoint: a.Checkpoint,
				Err: fmt.Errorf("subtask %d of %q restarted alone: %w (sent %s)", s.index, s.v.Name(), ErrCatchingUp, s.behind())})
		case input.RequestReplay:
			ic := s.inChan[a.Ch]
			src := s.rt.edges[ic.Edge].Source
			s.rt.requestReplay(dataflow.SubtaskID{Vertex: src.ID, Subtask: ic.From}, control{kind: ctlReplay, edge: ic.Edge, to: s.index, from: a.From, incarnation: s.incarnation})
		case input.ReplayStarted:
			// Logged by step.
		case input.Finish:
			return true, s.finish()
		case input.Fail:
			Fail(s.inputFailure(a))
		}
	}
	if failed >= 0 {
		return s.act(-1, exchange.Element{}, s.in.SnapshotFailed(failed))
	}
	if s.retiring && s.taking == nil {
		return true, nil // reported its last snapshot: it retires (reshape.go)
	}
	return false, nil
}

// deliver decodes the records of batch e that action a delivers into the
// chain.
func (s *subtask) deliver(ch int, e exchange.Element, a *input.Action) error {
	s.tctx.Metrics.RecordsIn.Add(int64(a.Limit - a.Skip))
	s.tctx.Metrics.Duplicates.Add(a.Duplicates)
	if s.restored && !s.replayed {
		s.replayed = true
		if err := s.inject(PointReplay, 0); err != nil {
			return err
		}
	}
	if f := s.taking; a.InFlight && f != nil && f.id == a.Checkpoint {
		s.keepInflight(ch, e.Buf.Copy())
	}
	s.decoding = decoding{ch: ch, from: a.From, to: a.To, on: true}
	err := s.decode[ch].Decode(e.Buf, a.Skip, a.Limit)
	s.decoding.on = false
	if a.Hold {
		s.pending[ch] = e
	} else {
		exchange.PutBuffer(e.Buf)
	}
	if err != nil {
		return err
	}
	if s.det != nil {
		s.det.Record(ch, a.To)
	}
	return s.settle()
}

// keepInflight keeps b as in-flight input of gate channel ch for the
// snapshot being taken.
func (s *subtask) keepInflight(ch int, b *exchange.Buffer) {
	if s.inflight == nil {
		s.inflight = make([][]*exchange.Buffer, len(s.decode))
	}
	s.inflight[ch] = append(s.inflight[ch], b)
}

// takeInputSnapshot carries out a Snapshot action; it reports whether
// the snapshot was taken (a standby's is its primary's: it only sends
// the barrier on).
func (s *subtask) takeInputSnapshot(a *input.Action) bool {
	var aligned time.Duration
	if a.Checkpoint == s.alignID {
		aligned = s.rt.opts.Now().Sub(s.alignStart)
	}
	s.disarmAlign(a.Checkpoint)
	if s.standby != nil {
		s.standbyBarrier(a.Checkpoint, a.Forward == input.MustAlign, a.Counts)
		return true
	}
	f := s.freeze(a.Checkpoint, aligned, a.Forward, a.Counts, a.Watermarks, a.Forward == input.MustAlign)
	s.taking, s.inflight = f, nil
	return f != nil
}

// disarmAlign stops the aligned timeout of checkpoint id's alignment.
func (s *subtask) disarmAlign(id int64) {
	if s.alignID == id {
		s.alignID = 0
	}
}

// alignDeadline returns when the alignment under way switches to the
// unaligned way; ok is false when none will.
func (s *subtask) alignDeadline() (at time.Time, ok bool) {
	t := s.rt.opts.AlignedTimeout
	if s.alignID == 0 || t <= 0 || s.rt.opts.Checkpoint != Aligned || s.in.Aligning() != s.alignID {
		return at, false
	}
	return s.alignStart.Add(t), true
}

// checkAlignedTimeout switches an alignment that waited longer than the
// aligned timeout to the unaligned way.
func (s *subtask) checkAlignedTimeout() {
	at, ok := s.alignDeadline()
	if !ok || s.rt.opts.Now().Before(at) {
		return
	}
	id := s.alignID
	s.alignID = 0
	s.noteCatchingUp()
	s.act(-1, exchange.Element{}, s.in.AlignedTimeout(id))
}

// inputFailure is the error of a Fail action.
func (s *subtask) inputFailure(a *input.Action) error {
	if a.Ch < 0 {
		// Finished behind its previous incarnation's output.
		return fmt.Errorf("%w: subtask %d of %q restarted alone and finished having sent %s", ErrNotDeterministic, s.index, s.v.Name(), s.behind())
	}
	return fmt.Errorf("on the channel from %s: %w", s.chanName(a.Ch), a.Err)
}

// requestReplays asks the sender of every input channel to replay its
// retained output from the records this restarted subtask holds on.
func (s *subtask) requestReplays() {
	s.act(-1, exchange.Element{}, s.in.RequestReplays(s.incarnation))
}
