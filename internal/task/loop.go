package task

import (
	"errors"
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/exchange"
)

// This file is a subtask's main loop: a source's read loop, the loop over
// an input gate and the control inbox, the processing of one element,
// processing-time timers, the end of input, and the wait for the release
// that follows it.

// runSource drives a source chain: read a batch, emit it, and now and then
// emit a watermark and ship partly filled buffers.
func (s *subtask) runSource() error {
	src := s.source
	if err := src.Open(s.opCtx(0), s.startPos); err != nil {
		return fmt.Errorf("opening source %q: %w", s.v.Head().Name, err)
	}
	if s.ready != nil {
		s.ready()
	}
	o := &s.rt.opts
	now := o.Now()
	lastWM, lastFlush, lastData, lastMarker := now, now, now, now
	var wait *time.Timer
	for {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		s.pollControl()
		n, eof, err := src.Read()
		if err != nil {
			return err
		}
		if eof {
			s.takeDeferred()
			return s.finish()
		}
		if s.rt.opts.TrackPositions {
			// Published before the records go out: at-most-once recovery
			// resumes after them even if they are lost.
			p := src.Position()
			s.rt.positions[s.v.ID][s.index].Store(&p)
		}
		if n > 0 && s.restored && !s.replayed {
			s.replayed = true
			if err := s.inject(PointReplay, 0); err != nil {
				return err
			}
		}
		src.Emit()
		if err := s.settle(); err != nil {
			return err
		}
		if s.catchUp != nil && !s.catchingUp() {
			s.takeDeferred()
		}
		now = o.Now()
		if n > 0 {
			lastData = now
			if s.idle && s.idler == nil {
				s.idle = false
				s.emitWatermark(s.outWM) // an active channel again
			}
		}
		if o.LatencyInterval != 0 && n > 0 && (o.LatencyInterval < 0 || now.Sub(lastMarker) >= o.LatencyInterval) {
			lastMarker = now
			s.forwardLatency(exchange.Element{Kind: exchange.Latency, Time: now.UnixNano()})
		}
		if now.Sub(lastWM) >= o.WatermarkInterval {
			lastWM = now
			s.advanceSource()
		}
		s.fireProcessingTimers()
		s.pollCompleted()
		if n == 0 || now.Sub(lastFlush) >= o.BufferTimeout {
			lastFlush = now
			s.flushAll()
		}
		if n == 0 {
			if o.IdleTimeout > 0 && !s.idle && s.idler == nil && now.Sub(lastData) >= o.IdleTimeout {
				s.idle = true
				s.emit(exchange.Element{Kind: exchange.Idle})
			}
			// A reader with nothing to read should block briefly itself;
			// this pause guards against one that returns at once.
			if wait == nil {
				wait = time.NewTimer(time.Millisecond)
			} else {
				wait.Reset(time.Millisecond)
			}
			s.tctx.Metrics.Idle.Add(int64(time.Millisecond))
			select {
			case <-wait.C:
			case <-s.wake:
				s.complete()
			case <-s.ctx.Done():
				wait.Stop()
				return s.ctx.Err()
			}
		}
	}
}

// runInputs drives a chain fed by a gate, through its input protocol
// (input.go).
func (s *subtask) runInputs() error {
	if s.role.regenerates() {
		s.gate.Reset()
		s.requestReplays()
		s.ready()
	}
	var timer *time.Timer
	defer s.unpollHeld()
	for {
		if s.log != nil {
			s.noteUnsafe()
		}
		ch, e, ok := s.next()
		if !ok {
			if err := s.ctx.Err(); err != nil {
				return err
			}
			if err := s.stashOthers(ch); err != nil {
				return err
			}
			s.flushAll()
			var fire, alignTimeout <-chan time.Time
			var at *time.Timer
			if deadline, ok := s.alignDeadline(); ok {
				at = time.NewTimer(deadline.Sub(s.rt.opts.Now()))
				alignTimeout = at.C
			}
			if t, ok := s.nextProcessingTime(); ok {
				d := time.Duration(t-s.tctx.Now()) * time.Millisecond
				if timer == nil {
					timer = time.NewTimer(d)
				} else {
					timer.Reset(d)
				}
				fire = timer.C
			}
			idleSince := time.Now()
			select {
			case <-s.gate.Ready():
			case <-fire:
				s.fireProcessingTimers()
			case <-s.wake:
				s.complete()
			case c := <-s.inbox:
				s.handleControl(c)
			case <-alignTimeout:
				s.checkAlignedTimeout()
			case <-s.ctx.Done():
				return s.ctx.Err()
			}
			s.tctx.Metrics.Idle.Add(int64(time.Since(idleSince)))
			if at != nil {
				at.Stop()
			}
			if timer != nil {
				timer.Stop()
			}
			continue
		}
		if s.log != nil {
			s.held = held{ch: ch, e: e, on: true}
		}
		s.pollControl()
		s.checkAlignedTimeout()
		s.pollCompleted()
		if done, err := s.step(ch, e); done || err != nil {
			return err
		}
	}
}

// held is an element a primary with an active standby took from its gate
// and has not logged yet: what it handles first (control messages,
// duplicates) may fail it.
type held struct {
	ch int
	e  exchange.Element
	on bool
}

// unpollHeld puts the element the subtask took from its gate but did not
// log back into the gate, when it stops in between: its active standby,
// which applies the log and then reads the gate, would otherwise never
// see it, and its snapshot would miss those records. What it stashed
// goes back behind it.
func (s *subtask) unpollHeld() {
	s.unstash()
	if s.held.on {
		s.held.on = false
		s.gate.Unpoll(s.held.ch, s.held.e)
	}
}

// decoding is the data batch a subtask decodes: records from to to-1 of
// gate channel ch.
type decoding struct {
	ch       int
	from, to int64
	on       bool
}

// located adds to a failure that a record reached the wrong subtask the
// records and the channel it came in, when it came from a batch.
func (s *subtask) located(err error) error {
	if !s.decoding.on || !errors.Is(err, ErrKeyGroupNotOwned) {
		return err
	}
	d := s.decoding
	ic := s.inChan[d.ch]
	return fmt.Errorf("%w, in records %d to %d from subtask %d of %q (input channel %d)",
		err, d.from, d.to-1, ic.From, s.rt.edges[ic.Edge].Source.Name(), d.ch)
}

func (s *subtask) emit(e exchange.Element) {
	if e.Kind == exchange.Barrier && e.Checkpoint <= s.dropBarriers {
		return // aborted before this former standby took over (standby_remote.go)
	}
	for _, o := range s.outs {
		o.Emit(e)
	}
}

func (s *subtask) flushAll() {
	s.keepRetainedMetric()
	for _, f := range s.flush {
		if err := f.Flush(); err != nil {
			Fail(err)
		}
	}
	for _, o := range s.outs {
		o.Flush()
	}
}

// finish ends a bounded input: the final watermark fires every event-time
// timer, operators emit what they hold, and consumers get End.
func (s *subtask) finish() error {
	if s.inWM < dataflow.MaxWatermark {
		s.advance(dataflow.MaxWatermark)
	}
	for i, op := range s.ops {
		if err := op.EndInput(); err != nil {
			return fmt.Errorf("ending input of %q: %w", s.v.Chain[i].Name, err)
		}
	}
	s.flushAll()
	s.emit(exchange.Element{Kind: exchange.End})
	s.finished = true
	if !s.role.standby() {
		s.rt.markFinished(s.ctx, dataflow.SubtaskID{Vertex: s.v.ID, Subtask: s.index})
	}
	return nil
}

func (s *subtask) nextProcessingTime() (int64, bool) {
	var next int64
	found := false
	for _, p := range s.procs {
		if t, ok := p.NextProcessingTime(); ok && (!found || t < next) {
			next, found = t, true
		}
	}
	return next, found
}

// fireProcessingTimers fires the chain's due processing-time timers and
// then tells the consumers whether an IdleAssigner went idle or active.
func (s *subtask) fireProcessingTimers() {
	if len(s.procs) == 0 {
		return
	}
	now := s.tctx.Now()
	for _, p := range s.procs {
		if t, ok := p.NextProcessingTime(); ok && t <= now {
			p.FireProcessingTime(now)
			if _, ok := p.(WatermarkAssigner); ok {
				s.advance(s.inWM)
			}
		}
	}
	s.followIdler()
}

// forwardLatency sends a latency marker on to one output channel, chosen
// in turn, as Flink forwards its latency markers: enough to sample every
// path without multiplying the markers.
func (s *subtask) forwardLatency(e exchange.Element) {
	if len(s.outs) == 0 || s.role.standby() {
		return
	}
	s.markerTurn++
	o := s.outs[s.markerTurn%len(s.outs)]
	o.EmitOne(s.markerTurn%o.Channels(), e)
}

// waitReleased keeps a finished subtask alive for checkpoints until the job
// releases it: its final state must be part of a completed checkpoint
// before two-phase-commit sinks may commit their last transaction.
//
// It keeps taking what arrives on its gate: a sender that restarted alone
// regenerates the output this subtask consumed, up to its end again, and
// must not block on a queue nobody reads.
func (s *subtask) waitReleased() error {
	if s.rt.opts.Checkpoint == NoCheckpoints {
		return nil
	}
	s.rt.opts.Host.Finished(dataflow.SubtaskID{Vertex: s.v.ID, Subtask: s.index})
	var ready <-chan struct{}
	if s.gate != nil {
		ready = s.gate.Ready()
	}
	for !s.released && !s.retiring {
		s.dropAfterEnd()
		select {
		case c := <-s.inbox:
			s.handleControl(c)
		case <-ready:
		case <-s.ctx.Done():
			return s.ctx.Err()
		}
	}
	return nil
}

// dropAfterEnd takes what a finished subtask's gate holds: records it
// consumed already, regenerated by a restarted sender, and that sender's
// control elements. A record it did not consume would have been lost
// (the end of its channel came before it): a broken invariant, which the
// protocol answers with a failure.
func (s *subtask) dropAfterEnd() {
	if s.in == nil {
		return
	}
	for {
		ch, e, ok := s.gate.Poll()
		if !ok {
			return
		}
		if e.Kind != exchange.Data {
			continue
		}
		s.act(ch, e, s.in.Step(ch, inputElement(e)))
	}
}
