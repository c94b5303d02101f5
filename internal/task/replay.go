package task

import (
	"fmt"

	"github.com/weir-stream/weir/internal/backup"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/plan"
)

// This file is the subtask's side of upstream backup: sequence numbers on
// every channel, output retained until the receivers' state that reflects
// it is durable, and replay to a receiver that restarted alone.
//
// Records on a channel are numbered from 0 by the sender. The receiver's
// input protocol (internal/input) counts what it consumed, drops the
// records it already has (a deterministic sender that restarted
// regenerates them) and fails on lost ones.

// startBackup makes the writers retain their output (Options.UpstreamBackup).
func (s *subtask) startBackup() {
	if !s.rt.opts.UpstreamBackup || len(s.outs) == 0 {
		return
	}
	s.backup = backup.New(s.rt.opts.RetainLimit)
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
	sent := make([][]int64, len(s.outs))
	k := 0
	for w := range s.outs {
		n := len(s.outCh[w])
		sent[w] = make([]int64, n)
		for j := range n {
			sent[w][j] = counts[k+j].N
		}
		k += n
	}
	if s.backup.Lost() && s.lostLogged {
		s.lostLogged = false
		s.rt.opts.logf("subtask %s: upstream backup is valid again from checkpoint %d", s.id(), id)
	}
	s.backup.Mark(id, sent)
}

// trimBackup drops the output retained before checkpoint id's barrier,
// now that id completed.
func (s *subtask) trimBackup(id int64) {
	if s.backup == nil {
		return
	}
	s.backup.Complete(id)
	s.tctx.Metrics.Retained.Store(s.backup.Retained())
}

// keepRetainedMetric publishes the retained bytes, and logs the fallback
// when the bound was hit.
func (s *subtask) keepRetainedMetric() {
	if s.backup == nil {
		return
	}
	if s.backup.Lost() && !s.lostLogged {
		s.lostLogged = true
		s.rt.opts.logf("subtask %s: output retained for upstream backup exceeded %d bytes and was dropped; a failure of its consumers before the next checkpoint falls back to a global rollback", s.id(), s.rt.opts.RetainLimit)
	}
	s.tctx.Metrics.Retained.Store(s.backup.Retained())
}

// restoreCounts sets the writers' sequence numbers from the snapshot's
// channel counts, and the control elements sent (ctl, active standby)
// when the snapshot holds them; it returns the records received per
// input channel, for the input protocol.
func (s *subtask) restoreCounts(counts, ctl []int64) ([]int64, error) {
	want := len(s.decode)
	for w := range s.outs {
		want += len(s.outCh[w])
	}
	if len(counts) != want {
		return nil, fmt.Errorf("restoring channel counts: the checkpoint has %d, the task %d channels", len(counts), want)
	}
	if ctl != nil && len(ctl) != want-len(s.decode) {
		return nil, fmt.Errorf("restoring control counts: the checkpoint has %d, the task %d output channels", len(ctl), want-len(s.decode))
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
	return counts[k:], nil
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
		if err := o.Replay(j, c.from, c.incarnation, s.role.regenerates() && !s.deterministic); err != nil {
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
