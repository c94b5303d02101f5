package task

import (
	"fmt"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/plan"
)

// This file is the subtask's side of upstream backup: sequence numbers on
// every channel, output retained until the receivers' state that reflects
// it is durable, and replay to a receiver that restarted alone.
//
// Records on a channel are numbered from 0 by the sender. A receiver
// counts what it consumed (recv); a data batch that starts below it holds
// records the receiver already has (a deterministic sender that restarted
// regenerates them), which it drops; one that starts above it means lost
// records, a broken invariant that fails the task.

// trimPoint is where a subtask stood on each output channel when it sent
// checkpoint id's barrier: once id completes, the receivers' state
// reflects everything before it.
type trimPoint struct {
	id   int64
	sent [][]int64 // per writer, per channel
}

// startBackup makes the writers retain their output (Options.UpstreamBackup).
func (s *subtask) startBackup() {
	if !s.rt.opts.UpstreamBackup || len(s.outs) == 0 {
		return
	}
	s.backup = newBackup(s.rt.opts.RetainLimit)
	for w, o := range s.outs {
		o.retain(s.backup, w)
	}
}

// noteTrimPoint remembers the sender counts of checkpoint id, just taken;
// counts is ordered as channelCounts orders it.
func (s *subtask) noteTrimPoint(id int64, counts []ChannelCount) {
	if s.backup == nil {
		return
	}
	tp := trimPoint{id: id, sent: make([][]int64, len(s.outs))}
	k := 0
	for w := range s.outs {
		n := len(s.outCh[w])
		tp.sent[w] = make([]int64, n)
		for j := range n {
			tp.sent[w][j] = counts[k+j].N
		}
		k += n
	}
	if s.backup.lost && s.lostLogged {
		s.lostLogged = false
		s.rt.opts.logf("subtask %s: upstream backup is valid again from checkpoint %d", s.id(), id)
	}
	s.backup.resume(func(w, ch int) int64 { return tp.sent[w][ch] })
	s.trimAt = append(s.trimAt, tp)
}

// trimBackup drops the output retained before checkpoint id's barrier,
// now that id completed.
func (s *subtask) trimBackup(id int64) {
	if s.backup == nil {
		return
	}
	n := 0
	for n < len(s.trimAt) && s.trimAt[n].id <= id {
		n++
	}
	if n == 0 {
		return
	}
	// The receivers' state of checkpoint id reflects everything before
	// this subtask's latest barrier up to id.
	tp := s.trimAt[n-1]
	s.trimAt = append(s.trimAt[:0], s.trimAt[n:]...)
	for w, chans := range tp.sent {
		for j, upTo := range chans {
			s.backup.trim(w, j, upTo)
		}
	}
	s.tctx.Metrics.Retained.Store(s.backup.Retained())
}

// keepRetainedMetric publishes the retained bytes, and logs the fallback
// when the bound was hit.
func (s *subtask) keepRetainedMetric() {
	if s.backup == nil {
		return
	}
	if s.backup.lost && !s.lostLogged {
		s.lostLogged = true
		s.rt.opts.logf("subtask %s: output retained for upstream backup exceeded %d bytes and was dropped; a failure of its consumers before the next checkpoint falls back to a global rollback", s.id(), s.rt.opts.RetainLimit)
	}
	s.tctx.Metrics.Retained.Store(s.backup.Retained())
}

// restoreCounts sets the writers' sequence numbers and the received
// counts from the snapshot's channel counts, and the control elements
// sent (ctl, active standby) when the snapshot holds them.
func (s *subtask) restoreCounts(counts, ctl []int64) error {
	want := len(s.recv)
	for w := range s.outs {
		want += len(s.outCh[w])
	}
	if len(counts) != want {
		return fmt.Errorf("restoring channel counts: the checkpoint has %d, the task %d channels", len(counts), want)
	}
	if ctl != nil && len(ctl) != want-len(s.recv) {
		return fmt.Errorf("restoring control counts: the checkpoint has %d, the task %d output channels", len(ctl), want-len(s.recv))
	}
	k := 0
	for w, o := range s.outs {
		n := len(s.outCh[w])
		o.restoreSent(counts[k : k+n])
		if ctl != nil {
			o.restoreControls(ctl[k : k+n])
		}
		k += n
	}
	copy(s.recv, counts[k:])
	return nil
}

// requestReplays asks the sender of every input channel to replay its
// retained output from the records this restarted subtask holds on. The
// channels are ignored until each sender's Replay element arrives.
func (s *subtask) requestReplays() {
	s.awaiting = make([]bool, len(s.recv))
	for c, ic := range s.inChan {
		s.awaiting[c] = true
		e := s.rt.edges[ic.Edge]
		s.rt.requestReplay(dataflow.SubtaskID{Vertex: e.Source.ID, Subtask: ic.From}, control{kind: ctlReplay, edge: ic.Edge, to: s.index, from: s.recv[c], incarnation: s.incarnation})
	}
	if len(s.awaiting) == 0 {
		s.awaiting = nil
	}
}

// awaitReplay handles element e on channel ch while the channel waits for
// its sender's replay: everything before the Replay element is dropped.
func (s *subtask) awaitReplay(ch int, e exchange.Element) {
	switch e.Kind {
	case exchange.Replay:
		if e.Checkpoint != s.incarnation {
			return // the answer to an earlier incarnation's request
		}
		s.awaiting[ch] = false
		s.recv[ch] = e.Seq
		if s.log != nil {
			s.log.append(logEntry{kind: logReplayStart, ch: ch, e: exchange.Element{Seq: e.Seq}})
		}
		for _, w := range s.awaiting {
			if w {
				return
			}
		}
		s.awaiting = nil
	case exchange.Data:
		exchange.PutBuffer(e.Buf)
	}
}

// duplicates handles a data batch on channel ch that does not start at the
// next expected record: it returns how many of its first records the
// subtask already has, and whether any are new.
func (s *subtask) duplicates(ch int, e exchange.Element) (skip int, keep bool) {
	recv := s.recv[ch]
	if s.follow != nil && e.Seq < recv && e.Seq+int64(e.Buf.N) > recv {
		// The rest of a batch split by the logged order, or a duplicate.
		return int(recv - e.Seq), true
	}
	if e.Seq > recv {
		ic := s.inChan[ch]
		Fail(fmt.Errorf("records %d to %d on the channel from subtask %d of %q are missing (the next batch starts at record %d)",
			recv, e.Seq-1, ic.From, s.rt.edges[ic.Edge].Source.Name(), e.Seq))
	}
	end := e.Seq + int64(e.Buf.N)
	s.tctx.Metrics.Duplicates.Add(min(end, recv) - e.Seq)
	if end <= recv {
		return 0, false
	}
	return int(recv - e.Seq), true
}

// replay serves a restarted receiver's replay request.
func (s *subtask) replay(c control) {
	for w, e := range s.v.Outputs {
		if s.rt.edgeIndex[e] != c.edge {
			continue
		}
		j := c.to
		if e.Partitioning == plan.Forward {
			j = 0
		}
		o := s.outs[w]
		if err := o.Replay(j, c.from, c.incarnation, s.fresh && !s.deterministic); err != nil {
			Fail(fmt.Errorf("replaying output to subtask %d of %q: %w", c.to, e.To.Name, err))
		}
		if s.source != nil && o.Sent()[j] < c.from {
			// The receiver holds records this restarted source has yet
			// to regenerate (an active standby that took over consumed
			// them): no barrier before it did.
			if s.catchUp == nil {
				s.catchUp = s.sentCounts()
			}
			s.catchUp[w][j] = max(s.catchUp[w][j], c.from)
		}
		if s.finished {
			continue // the replay ended with End
		}
		// The receiver's channel watermark restarts from nothing: tell it
		// where this sender stands.
		if s.outWM > dataflow.MinWatermark {
			o.Refresh(j, exchange.Element{Kind: exchange.Watermark, Time: s.outWM})
		}
		if s.idle {
			o.Refresh(j, exchange.Element{Kind: exchange.Idle})
		}
	}
}
