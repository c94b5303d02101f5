package task

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/input"
	"github.com/weir-stream/weir/internal/lenprefix"
	"github.com/weir-stream/weir/internal/standbylog"
)

// This file is a subtask's snapshot: its synchronous part, taken at the
// barrier (freeze), its report once an unaligned checkpoint collected the
// in-flight records, the record counts per channel it carries for the
// consistency check, and its encoding in sections.

// frozen is a subtask's snapshot between its synchronous part (taken at
// the barrier) and its report (after unaligned checkpoints collected the
// in-flight records).
type frozen struct {
	id      int64
	pos     []byte
	encs    []func(dst []byte) (Encoded, error)
	counts  []ChannelCount
	ctl     []int64              // control elements sent per output channel
	wms     []byte               // watermark state
	gen     []byte               // a source's watermark generator state
	output  [][]*exchange.Buffer // per writer and channel: records the barrier overtook
	aligned time.Duration
	sync    time.Duration
}

// freeze takes the synchronous part of checkpoint id's snapshot and sends
// the barrier on as fwd says: in FIFO order (marked MustAlign for a
// checkpoint that must be aligned), or ahead of everything queued (for
// unaligned checkpoints, keeping the overtaken output). recv
// are the records consumed per input channel and wms the input's
// watermark state: nil at a source, which stores its own (with no input
// channels, and its generator's state), and at a subtask that finished.
// A savepoint's snapshot holds the state in every backend's format
// (SnapshotOptions). It returns nil if an operator failed to snapshot,
// having reported the failure.
func (s *subtask) freeze(id int64, aligned time.Duration, fwd input.Forward, recv []int64, wms *input.Watermarks, savepoint bool) *frozen {
	s.lastCheckpoint = id
	start := s.rt.opts.Now()
	f := &frozen{id: id, aligned: aligned}
	if s.source != nil {
		f.pos = s.source.Position()
		if g, ok := s.source.(WatermarkGenerator); ok {
			f.gen = g.WatermarkState()
		}
	}
	f.encs = make([]func(dst []byte) (Encoded, error), len(s.ops))
	how := SnapshotOptions{Checkpoint: id, Savepoint: savepoint}
	for i, op := range s.ops {
		if l, ok := op.(CheckpointListener); ok {
			if err := l.PrepareSnapshot(id); err != nil {
				s.report(SnapshotResult{Checkpoint: id, Err: fmt.Errorf("%q preparing checkpoint %d: %w", s.v.Chain[i].Name, id, err)})
				return nil
			}
		}
		if sn, ok := op.(Snapshotter); ok {
			enc, err := sn.Snapshot(how)
			if err != nil {
				s.report(SnapshotResult{Checkpoint: id, Err: fmt.Errorf("%q snapshotting checkpoint %d: %w", s.v.Chain[i].Name, id, err)})
				return nil
			}
			f.encs[i] = enc
		}
	}
	switch b := (exchange.Element{Kind: exchange.Barrier, Checkpoint: id}); fwd {
	case input.InOrder, input.MustAlign:
		b.MustAlign = fwd == input.MustAlign
		s.emit(b)
	case input.Ahead:
		b.Unaligned = true
		for _, o := range s.outs {
			f.output = append(f.output, o.Pending())
			o.EmitPriority(b)
		}
	}
	f.counts = s.channelCounts(recv)
	switch {
	case wms != nil:
		f.wms = s.encodeWatermarks(wms)
	case s.source != nil:
		f.wms = s.encodeWatermarks(&input.Watermarks{Input: s.inWM, Idle: s.idle})
	}
	if s.rt.cursors[s.v.ID][s.index] != nil { // an active standby's pair restores them
		for _, o := range s.outs {
			f.ctl = append(f.ctl, o.controls()...)
		}
	}
	s.noteTrimPoint(id, f.counts)
	if s.det != nil {
		s.det.Mark(id)
	}
	if s.log != nil {
		s.log.Mark(id)
		// A standby that starts from this mark must know which later
		// checkpoints were aborted already.
		for _, a := range s.in.Aborted() {
			s.log.Append(standbylog.Entry{Kind: standbylog.Abort, Checkpoint: a})
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
	s.reshapeAt(id, f)
	return f
}

// takeSnapshot takes a source's (or a subtask's without inputs)
// snapshot of checkpoint id at once and reports it. Sources of unaligned
// checkpoints send their barrier ahead of their queued output too,
// unless the checkpoint must be aligned (how.Aligned: a savepoint's): its
// barrier goes in order, marked so, and every subtask aligns on it. A
// drained checkpoint (how.Drain) first advances the source to the final
// watermark, firing the event-time timers of its chain, so the snapshot
// holds the drained state and the watermark goes out before the barrier
// (it makes an idle source's channels active again, as its consumers
// take any watermark).
func (s *subtask) takeSnapshot(id int64, how TriggerOptions) {
	switch {
	case how.Drain && !s.finished && s.inWM < dataflow.MaxWatermark:
		s.idle = false
		s.advance(dataflow.MaxWatermark)
	case s.source != nil && !s.finished && !s.idle:
		// The watermark the records sent so far allow goes out ahead of
		// the barrier, not at the next tick: windows it closes fire
		// before the snapshot instead of being stored in it.
		s.advanceSource()
	}
	fwd := input.InOrder
	switch {
	case how.Aligned:
		fwd = input.MustAlign
	case s.rt.opts.Checkpoint == Unaligned:
		fwd = input.Ahead
	}
	if s.finished {
		fwd = input.NoBarrier
	}
	if f := s.freeze(id, 0, fwd, nil, nil, how.Aligned); f != nil {
		s.reportFrozen(f, nil)
	}
}

// reportFrozen encodes a frozen snapshot on a goroutine the subtask owns
// and reports it, with the in-flight input records of an unaligned
// checkpoint (per gate channel).
func (s *subtask) reportFrozen(f *frozen, inflight [][]*exchange.Buffer) {
	finished := s.finished
	chain := s.v.Chain
	s.async.Add(1)
	go func() {
		defer s.async.Done()
		t0 := s.rt.opts.Now()
		// Sized by the last snapshot, so that large state is not
		// copied again each time the buffer grows.
		last := s.snapshotSize.Load()
		out := make([]byte, 0, last+last/8+4096)
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
		if f.gen != nil {
			out = appendSection(out, sectionGenerator, 0, f.gen)
		}
		if f.ctl != nil {
			var ctl []byte
			for _, n := range f.ctl {
				ctl = binary.AppendUvarint(ctl, uint64(n))
			}
			out = appendSection(out, sectionControls, 0, ctl)
		}
		var shared []string
		var sharedBytes, uploaded int64
		for i, enc := range f.encs {
			if enc == nil {
				continue
			}
			out = append(out, sectionOperator)
			out = binary.AppendUvarint(out, uint64(chain[i].ID))
			var at int
			out, at = lenprefix.Reserve(out)
			e, err := enc(out)
			if err == nil {
				out = e.Data
				err = lenprefix.Fill(out, at)
			}
			if err != nil {
				s.report(SnapshotResult{Checkpoint: f.id, Err: fmt.Errorf("%q encoding checkpoint %d: %w", chain[i].Name, f.id, err)})
				return
			}
			shared = append(shared, e.Shared...)
			sharedBytes += e.SharedBytes
			uploaded += e.Uploaded
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
		s.snapshotSize.Store(int64(len(out)))
		s.report(SnapshotResult{Checkpoint: f.id, State: out, Shared: shared, SharedBytes: sharedBytes, Uploaded: uploaded, Alignment: f.aligned, Sync: f.sync,
			Async: s.rt.opts.Now().Sub(t0), Channels: f.counts})
	}()
}

// channelCounts returns the records sent per output channel (after the
// barrier went out, so that buffered records count as sent), then those
// received per input channel, recv.
func (s *subtask) channelCounts(recv []int64) []ChannelCount {
	var out []ChannelCount
	for i, w := range s.outs {
		for j, n := range w.Sent() {
			out = append(out, ChannelCount{Channel: s.outCh[i][j], Sender: true, N: n})
		}
	}
	for c, n := range recv {
		out = append(out, ChannelCount{Channel: s.inChan[c], N: n})
	}
	return out
}

func (s *subtask) report(r SnapshotResult) {
	r.Subtask = dataflow.SubtaskID{Vertex: s.v.ID, Subtask: s.index}
	s.rt.opts.Host.SnapshotTaken(r)
}

// Section kinds of a subtask snapshot.
const (
	sectionOperator   byte = 1 // an operator's state, by node ID
	sectionPosition   byte = 2 // the source position
	sectionChannels   byte = 3 // in-flight records of unaligned checkpoints
	sectionFinished   byte = 4 // the subtask had finished its input
	sectionOutput     byte = 5 // output records an unaligned barrier overtook
	sectionCounts     byte = 6 // records sent and received per channel
	sectionControls   byte = 7 // control elements sent per output channel (active standby)
	sectionWatermarks byte = 8 // the subtask's watermark state (watermark.go)
	sectionGenerator  byte = 9 // a source's watermark generator state (WatermarkGenerator)
)

// subtaskSnapshot is a subtask's decoded snapshot.
type subtaskSnapshot struct {
	operators map[int][][]byte // by node ID: one blob, or one per old subtask after a rescale (rescale.go)
	position  []byte
	inputs    map[int][]*exchange.Buffer // by gate channel
	outputs   map[int][]*exchange.Buffer // by writer<<16 | channel
	finished  bool
	counts    []int64 // as channelCounts orders them; nil in older snapshots
	controls  []int64 // per output channel, in writer order; nil without active standby
	wms       []byte  // watermark state; nil in older snapshots
	generator []byte  // a source's watermark generator state; nil in older snapshots
}

func appendSection(dst []byte, kind byte, id int, data []byte) []byte {
	dst = append(dst, kind)
	dst = binary.AppendUvarint(dst, uint64(id))
	dst = binary.AppendUvarint(dst, uint64(len(data)))
	return append(dst, data...)
}

func decodeSubtaskSnapshot(data []byte) (*subtaskSnapshot, error) {
	s := &subtaskSnapshot{operators: map[int][][]byte{}, inputs: map[int][]*exchange.Buffer{}, outputs: map[int][]*exchange.Buffer{}}
	for len(data) > 0 {
		kind := data[0]
		id, n := binary.Uvarint(data[1:])
		if n <= 0 {
			return nil, fmt.Errorf("subtask snapshot: bad section id: %w", codec.ErrCorrupt)
		}
		data = data[1+n:]
		l, n := binary.Uvarint(data)
		if n <= 0 || uint64(len(data)-n) < l {
			return nil, fmt.Errorf("subtask snapshot: truncated section: %w", codec.ErrCorrupt)
		}
		body := data[n : n+int(l)]
		data = data[n+int(l):]
		switch kind {
		case sectionOperator:
			s.operators[int(id)] = append(s.operators[int(id)], body)
		case sectionPosition:
			s.position = body
		case sectionChannels, sectionOutput:
			bufs, err := decodeBuffers(body)
			if err != nil {
				return nil, err
			}
			if kind == sectionChannels {
				s.inputs[int(id)] = bufs
			} else {
				s.outputs[int(id)] = bufs
			}
		case sectionFinished:
			s.finished = true
		case sectionWatermarks:
			s.wms = body
		case sectionGenerator:
			s.generator = body
		case sectionCounts, sectionControls:
			var vs []int64
			for len(body) > 0 {
				v, n := binary.Uvarint(body)
				if n <= 0 {
					return nil, fmt.Errorf("subtask snapshot: bad channel count: %w", codec.ErrCorrupt)
				}
				vs = append(vs, int64(v))
				body = body[n:]
			}
			if kind == sectionCounts {
				s.counts = vs
			} else {
				s.controls = vs
			}
		default:
			return nil, fmt.Errorf("subtask snapshot: unknown section kind %d: %w", kind, codec.ErrCorrupt)
		}
	}
	return s, nil
}

func encodeBuffers(bufs []*exchange.Buffer) []byte {
	var out []byte
	for _, b := range bufs {
		out = binary.AppendUvarint(out, uint64(b.N))
		bs := b.Bytes()
		out = binary.AppendUvarint(out, uint64(len(bs)))
		out = append(out, bs...)
	}
	return out
}

func decodeBuffers(data []byte) ([]*exchange.Buffer, error) {
	var out []*exchange.Buffer
	for len(data) > 0 {
		n, k := binary.Uvarint(data)
		if k <= 0 {
			return nil, fmt.Errorf("in-flight records: bad count: %w", codec.ErrCorrupt)
		}
		data = data[k:]
		l, k := binary.Uvarint(data)
		if k <= 0 || uint64(len(data)-k) < l {
			return nil, fmt.Errorf("in-flight records: truncated: %w", codec.ErrCorrupt)
		}
		out = append(out, &exchange.Buffer{B: data[k : k+int(l)], N: int(n)})
		data = data[k+int(l):]
	}
	return out, nil
}
