package task

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/exchange"
)

// frozen is a subtask's snapshot between its synchronous part (taken at
// the barrier) and its report (after unaligned checkpoints collected the
// in-flight records).
type frozen struct {
	id      int64
	pos     []byte
	encs    []func() []byte
	counts  []ChannelCount
	ctl     []int64              // control elements sent per output channel
	wms     []byte               // watermark state
	output  [][]*exchange.Buffer // per writer and channel: records the barrier overtook
	aligned time.Duration
	sync    time.Duration
}

// freeze takes the synchronous part of checkpoint id's snapshot and sends
// the barrier on: in FIFO order, or ahead of everything queued (priority,
// for unaligned checkpoints, keeping the overtaken output). It returns nil
// if an operator failed to snapshot, having reported the failure.
func (s *subtask) freeze(id int64, aligned time.Duration, forward, priority bool) *frozen {
	s.lastCheckpoint = id
	s.aborted = slices.DeleteFunc(s.aborted, func(a int64) bool { return a <= id })
	if err := s.notCaughtUp(); err != nil {
		if errors.Is(err, ErrNotDeterministic) {
			Fail(err)
		}
		s.report(SnapshotResult{Checkpoint: id, Err: err})
		return nil
	}
	start := s.rt.opts.Now()
	f := &frozen{id: id, aligned: aligned}
	if s.source != nil {
		f.pos = s.source.Position()
	}
	f.encs = make([]func() []byte, len(s.ops))
	for i, op := range s.ops {
		if l, ok := op.(CheckpointListener); ok {
			if err := l.PrepareSnapshot(id); err != nil {
				s.report(SnapshotResult{Checkpoint: id, Err: fmt.Errorf("%q preparing checkpoint %d: %w", s.v.Chain[i].Name, id, err)})
				return nil
			}
		}
		if sn, ok := op.(Snapshotter); ok {
			enc, err := sn.Snapshot()
			if err != nil {
				s.report(SnapshotResult{Checkpoint: id, Err: fmt.Errorf("%q snapshotting checkpoint %d: %w", s.v.Chain[i].Name, id, err)})
				return nil
			}
			f.encs[i] = enc
		}
	}
	if forward && !s.finished {
		b := exchange.Element{Kind: exchange.Barrier, Checkpoint: id}
		if priority {
			b.Unaligned = true
			for _, o := range s.outs {
				f.output = append(f.output, o.Pending())
				o.EmitPriority(b)
			}
		} else {
			s.emit(b)
		}
	}
	f.counts = s.channelCounts()
	if s.source == nil {
		f.wms = s.encodeWatermarks()
	}
	if s.rt.cursors[s.v.ID][s.index] != nil { // an active standby's pair restores them
		for _, o := range s.outs {
			f.ctl = append(f.ctl, o.controls()...)
		}
	}
	s.noteTrimPoint(id, f.counts)
	if s.det != nil {
		s.det.mark(id)
	}
	if s.log != nil {
		s.log.mark(id)
		// A standby that starts from this mark must know which later
		// checkpoints were aborted already.
		for _, a := range s.aborted {
			s.log.append(logEntry{kind: logAbort, checkpoint: a})
		}
	}
	// Output the barrier overtook is stored here, not reflected by the
	// receivers: it does not count as sent before the snapshot.
	k := 0
	for w, bufs := range f.output {
		for j, b := range bufs {
			if b != nil {
				f.counts[k+j].N -= int64(b.N)
			}
		}
		k += len(s.outCh[w])
	}
	f.sync = s.rt.opts.Now().Sub(start)
	return f
}

// takeSnapshot takes checkpoint id's snapshot at once and reports it.
func (s *subtask) takeSnapshot(id int64, aligned time.Duration, forward bool) {
	// Sources of unaligned checkpoints send their barrier ahead of their
	// queued output too.
	if s.standby != nil {
		s.standbyBarrier(id)
		return
	}
	priority := s.rt.opts.Checkpoint == Unaligned
	if f := s.freeze(id, aligned, forward, priority); f != nil {
		s.reportFrozen(f, nil, nil)
	}
}

// reportFrozen encodes a frozen snapshot on a goroutine the subtask owns
// and reports it, with the in-flight input records of an unaligned
// checkpoint (per gate channel), whose counts adjust the receivers'.
func (s *subtask) reportFrozen(f *frozen, inflight [][]*exchange.Buffer, extra []int64) {
	for i, c := range f.counts {
		if !c.Sender && extra != nil {
			f.counts[i].N += extra[s.chanIndex(c.Channel)]
		}
	}
	finished := s.finished
	chain := s.v.Chain
	s.async.Add(1)
	go func() {
		defer s.async.Done()
		t0 := s.rt.opts.Now()
		var out []byte
		if f.pos != nil {
			out = appendSection(out, sectionPosition, 0, f.pos)
		}
		if finished {
			out = appendSection(out, sectionFinished, 0, nil)
		}
		var counts []byte
		for _, c := range f.counts {
			counts = binary.AppendUvarint(counts, uint64(c.N))
		}
		out = appendSection(out, sectionCounts, 0, counts)
		if f.wms != nil {
			out = appendSection(out, sectionWatermarks, 0, f.wms)
		}
		if f.ctl != nil {
			var ctl []byte
			for _, n := range f.ctl {
				ctl = binary.AppendUvarint(ctl, uint64(n))
			}
			out = appendSection(out, sectionControls, 0, ctl)
		}
		for i, enc := range f.encs {
			if enc != nil {
				out = appendSection(out, sectionOperator, chain[i].ID, enc())
			}
		}
		for c, bufs := range inflight {
			if len(bufs) > 0 {
				out = appendSection(out, sectionChannels, c, encodeBuffers(bufs))
			}
		}
		for w, bufs := range f.output {
			for j, b := range bufs {
				if b != nil {
					out = appendSection(out, sectionOutput, w<<16|j, encodeBuffers([]*exchange.Buffer{b}))
				}
			}
		}
		if err := s.inject(PointSnapshotBeforeAck, f.id); err != nil {
			s.rt.Kill(dataflow.SubtaskID{Vertex: s.v.ID, Subtask: s.index}, err)
			return
		}
		s.report(SnapshotResult{Checkpoint: f.id, State: out, Alignment: f.aligned, Sync: f.sync,
			Async: s.rt.opts.Now().Sub(t0), Channels: f.counts})
	}()
}

// chanIndex returns the gate channel of an input channel.
func (s *subtask) chanIndex(c dataflow.Channel) int {
	for i, ic := range s.inChan {
		if ic == c {
			return i
		}
	}
	return 0
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

func (s *subtask) report(r SnapshotResult) {
	r.Subtask = dataflow.SubtaskID{Vertex: s.v.ID, Subtask: s.index}
	if s.rt.opts.OnSnapshot != nil {
		s.rt.opts.OnSnapshot(r)
	}
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
	if s.rt.opts.OnFinished != nil {
		s.rt.opts.OnFinished(dataflow.SubtaskID{Vertex: s.v.ID, Subtask: s.index})
	}
	var ready <-chan struct{}
	if s.gate != nil {
		ready = s.gate.Ready()
	}
	for !s.released {
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
// (the end of its channel came before it): a broken invariant.
func (s *subtask) dropAfterEnd() {
	for {
		ch, e, ok := s.gate.Poll()
		if !ok {
			return
		}
		if e.Kind != exchange.Data {
			continue
		}
		if _, keep := s.duplicates(ch, e); keep {
			ic := s.inChan[ch]
			Fail(fmt.Errorf("records %d to %d on the channel from subtask %d of %q came after it ended at record %d",
				e.Seq, e.Seq+int64(e.Buf.N)-1, ic.From, s.rt.edges[ic.Edge].Source.Name(), s.recv[ch]))
		}
		exchange.PutBuffer(e.Buf)
	}
}
