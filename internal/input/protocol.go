package input

import (
	"fmt"
)

// Protocol is the input protocol of one subtask incarnation. Create it
// with New.
type Protocol struct {
	mode  Mode
	chans []channel

	inWM int64 // the input watermark delivered to the chain
	idle bool  // the consumers were told the subtask is idle
	// holder is the active channel with the lowest watermark, -1 if none.
	holder int

	align   *alignment
	last    int64   // the latest checkpoint whose snapshot was taken or declined
	aborted []int64 // checkpoints above last that were aborted

	incarnation int64
	follow      []Turn
	behind      bool // the output is behind the previous incarnation's (CatchingUp)
	holding     int  // channels whose split batch the shell holds
	finished    bool
	started     bool // a Step came: no more Restore

	out []Action
}

// channel is what the Protocol knows of one input channel.
type channel struct {
	recv     int64 // records consumed
	wm       int64
	state    ChannelState
	blocked  bool
	awaiting bool // waits for its sender's Replay
	held     bool // the shell holds the rest of a batch split by the logged order
}

// New returns the protocol of a subtask that starts with nothing
// consumed, every channel active at MinWatermark. The error wraps
// ErrBadConfig.
func New(cfg Config) (*Protocol, error) {
	if cfg.Channels < 1 {
		return nil, fmt.Errorf("%w: %d input channels, want at least 1", ErrBadConfig, cfg.Channels)
	}
	if cfg.Mode > AtLeastOnce {
		return nil, fmt.Errorf("%w: unknown checkpoint mode %d", ErrBadConfig, cfg.Mode)
	}
	p := &Protocol{mode: cfg.Mode, chans: make([]channel, cfg.Channels), inWM: MinWatermark, holder: -1}
	for c := range p.chans {
		p.chans[c].wm = MinWatermark
	}
	return p, nil
}

// Step handles element e, read from channel ch.
func (p *Protocol) Step(ch int, e Element) []Action {
	p.out = p.out[:0]
	p.started = true
	if ch < 0 || ch >= len(p.chans) {
		panic(fmt.Sprintf("input: step on channel %d of %d", ch, len(p.chans)))
	}
	if e.Kind == Data && e.N < 1 {
		panic(fmt.Sprintf("input: a batch of %d records on channel %d", e.N, ch))
	}
	if p.settle(); len(p.follow) > 0 && p.follow[0].Ch != ch {
		panic(fmt.Sprintf("input: step on channel %d while the logged order reads channel %d", ch, p.follow[0].Ch))
	}
	c := &p.chans[ch]
	switch {
	case p.finished:
		if e.Kind == Data {
			p.afterEnd(ch, e)
		}
	case c.awaiting:
		p.awaitReplay(ch, e)
	default:
		p.element(ch, e)
	}
	return p.out
}

// element handles e on channel ch, which waits for no replay, of a
// subtask that has not finished.
func (p *Protocol) element(ch int, e Element) {
	c := &p.chans[ch]
	switch e.Kind {
	case Data:
		if c.state == ChanEnded {
			p.afterEnd(ch, e)
			return
		}
		p.data(ch, e)
	case Watermark:
		c.wm = max(c.wm, e.Time)
		if c.state == ChanIdle {
			c.state = ChanActive
		}
		p.combine()
	case Idle:
		if c.state == ChanActive {
			c.state = ChanIdle
		}
		p.combine()
	case End:
		p.endAfterBarrier(ch)
		c.state = ChanEnded
		p.maybeAligned()
		if p.allEnded() {
			p.finish()
			return
		}
		p.combine()
	case Barrier:
		p.barrier(ch, e)
	case Latency:
		p.emit(Action{Kind: ForwardLatency, Ch: ch})
	case Replay:
		// A replay this incarnation did not ask for: nothing to do.
	}
}

// data handles batch e on channel ch: it drops the records consumed
// before, and delivers the rest, or, while a logged order is followed,
// those up to where the order turns to another channel.
func (p *Protocol) data(ch int, e Element) {
	c := &p.chans[ch]
	end := e.Seq + int64(e.N)
	skip, limit := 0, e.N
	var dups int64
	if e.Seq != c.recv {
		if e.Seq > c.recv {
			p.fail(ch, fmt.Errorf("%w on input channel %d: records %d to %d (the next batch starts at record %d)",
				ErrRecordsMissing, ch, c.recv, e.Seq-1, e.Seq))
			return
		}
		if end <= c.recv {
			p.emit(Action{Kind: Discard, Ch: ch, Duplicates: int64(e.N)})
			return
		}
		skip = int(c.recv - e.Seq)
		if !c.held { // a held rest comes again by design, not as a duplicate
			dups = int64(skip)
		}
	}
	if c.held {
		c.held = false
		p.holding--
	}
	if len(p.follow) > 0 && p.follow[0].Ch == ch && end > p.follow[0].UpTo {
		limit = int(p.follow[0].UpTo - e.Seq)
		c.held = true
		p.holding++
	}
	if c.state == ChanIdle {
		c.state = ChanActive // the watermark is combined again at the next one
	}
	a := Action{Kind: Deliver, Ch: ch, Skip: skip, Limit: limit, From: e.Seq + int64(skip), To: e.Seq + int64(limit),
		Hold: c.held, Duplicates: dups}
	if al := p.align; al != nil && al.frozen && !al.seen[ch] {
		a.InFlight, a.Checkpoint = true, al.id
		al.inflight[ch] += int64(limit - skip)
	}
	c.recv = a.To
	p.emit(a)
}

// afterEnd handles batch e on channel ch, which ended: a sender
// restarted alone regenerates what the subtask consumed up to the end
// again, which it drops; a record it did not consume would have been
// lost.
func (p *Protocol) afterEnd(ch int, e Element) {
	c := &p.chans[ch]
	end := e.Seq + int64(e.N)
	switch {
	case e.Seq > c.recv:
		p.fail(ch, fmt.Errorf("%w on input channel %d: records %d to %d (the next batch starts at record %d)",
			ErrRecordsMissing, ch, c.recv, e.Seq-1, e.Seq))
	case end > c.recv:
		p.fail(ch, fmt.Errorf("%w: input channel %d ended after %d records, then records %d to %d came",
			ErrAfterEnd, ch, c.recv, max(e.Seq, c.recv), end-1))
	default:
		p.emit(Action{Kind: Discard, Ch: ch, Duplicates: int64(e.N)})
	}
}

func (p *Protocol) allEnded() bool {
	for _, c := range p.chans {
		if c.state != ChanEnded {
			return false
		}
	}
	return true
}

// finish ends the input: the final watermark, then Finish.
func (p *Protocol) finish() {
	if p.inWM < MaxWatermark {
		p.advance(MaxWatermark)
	}
	p.finished = true
	p.emit(Action{Kind: Finish})
}

func (p *Protocol) emit(a Action) { p.out = append(p.out, a) }

func (p *Protocol) fail(ch int, err error) { p.emit(Action{Kind: Fail, Ch: ch, Err: err}) }

// Next says where the shell reads its next element: from channel ch
// alone when only is set (a batch it holds for ch first, then ch's
// queue, blocked or not: the logged order was consumed under the same
// blocks), from any unblocked channel otherwise (the gate's next
// element). A channel with nothing queued is waited for.
func (p *Protocol) Next() (ch int, only bool) {
	if p.settle(); len(p.follow) > 0 {
		return p.follow[0].Ch, true
	}
	if p.holding > 0 {
		for c := range p.chans {
			if p.chans[c].held {
				return c, true
			}
		}
	}
	return 0, false
}

// Settled reports whether the subtask reads its gate freely: it waits
// for no replay, follows no logged order and holds no split batch. Only
// then would another instance that reads the same gate (an active
// standby taking over) see the same input.
func (p *Protocol) Settled() bool {
	if p.settle(); len(p.follow) > 0 {
		return false
	}
	for _, c := range p.chans {
		if c.awaiting || c.held {
			return false
		}
	}
	return true
}

// Consumed returns the records consumed on channel ch.
func (p *Protocol) Consumed(ch int) int64 { return p.chans[ch].recv }

// Counts returns the records consumed per channel.
func (p *Protocol) Counts() []int64 {
	out := make([]int64, len(p.chans))
	for c := range p.chans {
		out[c] = p.chans[c].recv
	}
	return out
}

// Aligning returns the checkpoint whose barriers are being aligned (also
// when its snapshot was taken and it waits for the remaining barriers
// only to collect in-flight input), 0 when none.
func (p *Protocol) Aligning() int64 {
	if p.align == nil {
		return 0
	}
	return p.align.id
}

// Aborted returns the checkpoints above the latest snapshot that were
// aborted, whose barriers are ignored. The slice is the Protocol's and
// valid until the next call.
func (p *Protocol) Aborted() []int64 { return p.aborted }

// Finished reports whether every channel ended.
func (p *Protocol) Finished() bool { return p.finished }

// Watermark returns the input watermark and the active channel with the
// lowest watermark, which holds it back (-1 if none).
func (p *Protocol) Watermark() (wm int64, heldBackBy int) { return p.inWM, p.holder }

// Watermarks returns the watermark state, as a snapshot would hold it.
func (p *Protocol) Watermarks() *Watermarks {
	w := &Watermarks{Input: p.inWM, Idle: p.idle, Channels: make([]ChannelMark, len(p.chans))}
	for c, ch := range p.chans {
		w.Channels[c] = ChannelMark{Watermark: ch.wm, State: ch.state}
	}
	return w
}

// Status is what a subtask waits on, for reports of a stalled job.
type Status struct {
	// Replays are the channels that wait for their sender's replay.
	Replays []int
	// Follow is the logged order still to repeat; its first turn is the
	// one waited on.
	Follow []Turn
	// Aligning is the checkpoint being aligned (0: none) and Missing the
	// channels whose barrier it waits for.
	Aligning int64
	Missing  []int
	// Blocked are the channels blocked by the alignment.
	Blocked []int
	// Ended are the channels that ended.
	Ended []int
	// Last is the latest checkpoint whose snapshot was taken or declined.
	Last     int64
	Finished bool
}

// Status describes what the subtask waits on.
func (p *Protocol) Status() Status {
	p.settle()
	s := Status{Follow: append([]Turn(nil), p.follow...), Last: p.last, Finished: p.finished}
	for i, c := range p.chans {
		if c.awaiting {
			s.Replays = append(s.Replays, i)
		}
		if c.blocked {
			s.Blocked = append(s.Blocked, i)
		}
		if c.state == ChanEnded {
			s.Ended = append(s.Ended, i)
		}
	}
	if a := p.align; a != nil {
		s.Aligning = a.id
		for i, seen := range a.seen {
			if !seen && p.chans[i].state != ChanEnded {
				s.Missing = append(s.Missing, i)
			}
		}
	}
	return s
}
