package input

import (
	"fmt"
)

// A subtask restarted alone (fine-grained failover) restores the channel
// counts of its checkpoint, asks each sender to replay its retained
// output from there, and ignores each channel until that sender's Replay
// element arrives: what came before it was sent to the failed
// incarnation. A batch that starts below what was consumed holds
// duplicates (a sender restarted alone regenerates its output), which are
// dropped. If the subtask merges channels in an order it logged, it
// repeats that order up to where the log ends, splitting batches where
// the order turned to another channel mid-batch, before it reads its
// gate freely again.

// State is what a subtask restarted alone restores of its input from its
// checkpoint.
type State struct {
	// Counts are the records consumed per channel.
	Counts []int64
	// Watermarks is the watermark state; nil keeps the fresh one (a
	// checkpoint from a version that did not store it).
	Watermarks *Watermarks
}

// Restore sets the channel counts and the watermark state from a
// checkpoint. It is called before the first Step; an error says the
// checkpoint does not fit the subtask's channels.
func (p *Protocol) Restore(st State) error {
	if p.started {
		panic("input: Restore after the first Step")
	}
	if len(st.Counts) != len(p.chans) {
		return fmt.Errorf("restoring channel counts: the checkpoint has %d, the subtask %d input channels", len(st.Counts), len(p.chans))
	}
	if w := st.Watermarks; w != nil && len(w.Channels) != len(p.chans) {
		return fmt.Errorf("restoring watermarks: the checkpoint has %d, the subtask %d input channels", len(w.Channels), len(p.chans))
	}
	for c, n := range st.Counts {
		if n < 0 {
			return fmt.Errorf("restoring channel counts: %d records on input channel %d", n, c)
		}
	}
	if w := st.Watermarks; w != nil {
		for c, m := range w.Channels {
			if m.State > ChanEnded {
				return fmt.Errorf("restoring watermarks: input channel %d in unknown state %d", c, m.State)
			}
		}
	}
	for c := range p.chans {
		p.chans[c].recv = st.Counts[c]
	}
	if w := st.Watermarks; w != nil {
		p.inWM, p.idle = w.Input, w.Idle
		for c, m := range w.Channels {
			p.chans[c].wm, p.chans[c].state = m.Watermark, m.State
		}
	}
	return nil
}

// RequestReplays asks every channel's sender to replay its retained
// output from the records consumed on, for incarnation incarnation. Each
// channel is ignored until its sender's Replay for that incarnation
// arrives.
func (p *Protocol) RequestReplays(incarnation int64) []Action {
	p.out = p.out[:0]
	p.incarnation = incarnation
	for c := range p.chans {
		p.chans[c].awaiting = true
		p.emit(Action{Kind: RequestReplay, Ch: c, From: p.chans[c].recv})
	}
	return p.out
}

// awaitReplay handles element e on channel ch while it waits for its
// sender's replay: everything before the Replay element is dropped.
func (p *Protocol) awaitReplay(ch int, e Element) {
	c := &p.chans[ch]
	switch e.Kind {
	case Replay:
		if e.Incarnation != p.incarnation {
			return // the answer to an earlier incarnation's request
		}
		c.awaiting = false
		c.recv = e.Seq
		p.emit(Action{Kind: ReplayStarted, Ch: ch, From: e.Seq})
	case Data:
		p.emit(Action{Kind: Discard, Ch: ch})
	}
}

// Resume makes channel ch continue at record seq, waiting for no
// replay: an active standby, which applies its primary's logged input
// instead of reading a gate, repeats there the primary's ReplayStarted
// (the replay its primary's sender started). It returns no actions.
func (p *Protocol) Resume(ch int, seq int64) {
	if ch < 0 || ch >= len(p.chans) {
		panic(fmt.Sprintf("input: resume on channel %d of %d", ch, len(p.chans)))
	}
	c := &p.chans[ch]
	c.awaiting = false
	c.recv = seq
}

// Awaits reports whether channel ch waits for its sender's replay: a
// Step on it consumes nothing but the Replay that ends the wait.
func (p *Protocol) Awaits(ch int) bool { return p.chans[ch].awaiting }

// Follow makes the subtask repeat a logged consumption order before it
// reads its gate freely: Next names each turn's channel until that turn's
// records were consumed.
func (p *Protocol) Follow(order []Turn) {
	if p.started {
		panic("input: Follow after the first Step")
	}
	for _, t := range order {
		if t.Ch < 0 || t.Ch >= len(p.chans) {
			panic(fmt.Sprintf("input: a logged turn to channel %d of %d", t.Ch, len(p.chans)))
		}
	}
	p.follow = append([]Turn(nil), order...)
}

// settle drops the turns of the logged order that are done: their
// records were consumed and their channel waits for no replay (which may
// resume it lower). It runs lazily, when the next channel to read is
// asked for, so that replays requested after Follow count.
func (p *Protocol) settle() {
	for len(p.follow) > 0 {
		t := p.follow[0]
		if c := p.chans[t.Ch]; c.recv < t.UpTo || c.awaiting {
			return
		}
		p.follow = p.follow[1:]
	}
}
