package task

import (
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/exchange"
)

// takeSnapshot snapshots the chain for checkpoint id, forwards the barrier
// when forward is set, and encodes and reports the state on a goroutine
// the subtask owns.
func (s *subtask) takeSnapshot(id int64, aligned time.Duration, forward bool) {
	s.lastCheckpoint = id
	start := s.rt.opts.Now()
	var pos []byte
	if s.source != nil {
		pos = s.source.Position()
	}
	encs := make([]func() []byte, len(s.ops))
	for i, op := range s.ops {
		if l, ok := op.(CheckpointListener); ok {
			if err := l.PrepareSnapshot(id); err != nil {
				s.report(SnapshotResult{Checkpoint: id, Err: fmt.Errorf("%q preparing checkpoint %d: %w", s.v.Chain[i].Name, id, err)})
				return
			}
		}
		if sn, ok := op.(Snapshotter); ok {
			enc, err := sn.Snapshot()
			if err != nil {
				s.report(SnapshotResult{Checkpoint: id, Err: fmt.Errorf("%q snapshotting checkpoint %d: %w", s.v.Chain[i].Name, id, err)})
				return
			}
			encs[i] = enc
		}
	}
	if forward && !s.finished {
		s.emit(exchange.Element{Kind: exchange.Barrier, Checkpoint: id})
	}
	counts := s.channelCounts()
	sync := s.rt.opts.Now().Sub(start)
	finished := s.finished
	chain := s.v.Chain
	s.async.Add(1)
	go func() {
		defer s.async.Done()
		t0 := s.rt.opts.Now()
		var out []byte
		if pos != nil {
			out = appendSection(out, sectionPosition, 0, pos)
		}
		if finished {
			out = appendSection(out, sectionFinished, 0, nil)
		}
		for i, enc := range encs {
			if enc != nil {
				out = appendSection(out, sectionOperator, chain[i].ID, enc())
			}
		}
		if err := s.inject(PointSnapshotBeforeAck, id); err != nil {
			s.rt.kill(s.fail(err))
			return
		}
		s.report(SnapshotResult{Checkpoint: id, State: out, Alignment: aligned, Sync: sync, Async: s.rt.opts.Now().Sub(t0), Channels: counts})
	}()
}

// channelCounts returns the records sent and received per channel (after
// the barrier went out, so that buffered records count as sent).
func (s *subtask) channelCounts() []ChannelCount {
	var out []ChannelCount
	for i, w := range s.outs {
		for j, n := range w.Sent() {
			out = append(out, ChannelCount{Channel: s.outCh[i][j], Sender: true, N: n})
		}
	}
	for c, n := range s.recv {
		out = append(out, ChannelCount{Channel: s.inChan[c], N: n})
	}
	return out
}

// finishUnaligned completes an unaligned checkpoint whose operator
// snapshot was taken earlier, adding the in-flight records.
func (s *subtask) finishUnaligned(id int64, channels []byte) {
	// The operator state was reported with the snapshot; unaligned
	// in-flight data travels in a report of its own.
	_ = channels
}

func (s *subtask) report(r SnapshotResult) {
	r.Subtask = SubtaskID{s.v.ID, s.index}
	if s.rt.opts.OnSnapshot != nil {
		s.rt.opts.OnSnapshot(r)
	}
}

// handleControl acts on a message from the job.
func (s *subtask) handleControl(c control) {
	switch c.kind {
	case ctlTrigger:
		if c.checkpoint > s.lastCheckpoint {
			// A source injects the barrier; a finished subtask snapshots
			// its final state.
			s.takeSnapshot(c.checkpoint, 0, true)
		}
	case ctlComplete:
		if err := s.inject(PointCompleteBeforeCommit, c.checkpoint); err != nil {
			Fail(err)
		}
		for i, op := range s.ops {
			if l, ok := op.(CheckpointListener); ok {
				if err := l.CheckpointComplete(c.checkpoint); err != nil {
					Fail(fmt.Errorf("%q committing checkpoint %d: %w", s.v.Chain[i].Name, c.checkpoint, err))
				}
			}
		}
	case ctlAbort:
		if s.align != nil && s.align.id == c.checkpoint {
			s.abortAlignment()
		}
		for _, op := range s.ops {
			if l, ok := op.(CheckpointListener); ok {
				l.CheckpointAborted(c.checkpoint)
			}
		}
	case ctlRelease:
		s.released = true
	}
}

// pollControl handles the pending control messages without blocking.
func (s *subtask) pollControl() {
	for {
		select {
		case c := <-s.inbox:
			s.handleControl(c)
		default:
			return
		}
	}
}

// waitReleased keeps a finished subtask alive for checkpoints until the job
// releases it: its final state must be part of a completed checkpoint
// before two-phase-commit sinks may commit their last transaction.
func (s *subtask) waitReleased() error {
	if s.rt.opts.Checkpoint == NoCheckpoints {
		return nil
	}
	if s.rt.opts.OnFinished != nil {
		s.rt.opts.OnFinished(SubtaskID{s.v.ID, s.index})
	}
	for !s.released {
		select {
		case c := <-s.inbox:
			s.handleControl(c)
		case <-s.ctx.Done():
			return s.ctx.Err()
		}
	}
	return nil
}
