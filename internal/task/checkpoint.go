package task

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/exchange"
)

// CheckpointMode says how a runtime takes checkpoints.
type CheckpointMode int

const (
	// NoCheckpoints: barriers are never injected.
	NoCheckpoints CheckpointMode = iota
	// Aligned checkpoints block each input after its barrier until the
	// barrier arrived on all inputs: the snapshot reflects exactly the
	// records before the barrier (exactly-once).
	Aligned
	// Unaligned checkpoints let barriers overtake records; the overtaken
	// records are stored with the snapshot (exactly-once).
	Unaligned
	// AtLeastOnce checkpoints count barriers without blocking inputs:
	// records after a barrier may enter the snapshot, so a restore may
	// replay them twice.
	AtLeastOnce
)

// Snapshotter is implemented by operators that hold state.
//
// Snapshot is called on the task goroutine when the task takes checkpoint
// id; it freezes a logical copy of the state and returns the function that
// encodes it, which runs on another goroutine while the operator goes on.
// Restore is called before Open with the bytes an earlier Snapshot encoded.
type Snapshotter interface {
	Snapshot() (func() []byte, error)
	Restore(data []byte) error
}

// CheckpointListener is implemented by operators that act when a
// checkpoint completes or is aborted, such as two-phase-commit sinks.
// PrepareSnapshot is called before Snapshot, at the barrier.
type CheckpointListener interface {
	PrepareSnapshot(id int64) error
	CheckpointComplete(id int64) error
	CheckpointAborted(id int64)
}

// SnapshotResult is a subtask's contribution to checkpoint Checkpoint,
// handed to Options.OnSnapshot from the subtask's snapshot goroutine.
type SnapshotResult struct {
	Subtask    dataflow.SubtaskID
	Checkpoint int64
	State      []byte
	// Err is set when the subtask could not take the snapshot.
	Err error
	// Alignment is how long the subtask waited for barriers; Sync is the
	// time processing stopped for the snapshot; Async the encoding time.
	Alignment, Sync, Async time.Duration
	// Channels counts, per channel, the records this subtask had sent
	// (as sender) or had reflected in its state (as receiver) when it took
	// the snapshot, for the consistency check.
	Channels []ChannelCount
}

// ChannelCount is a record count on a channel.
type ChannelCount struct {
	dataflow.Channel
	Sender bool
	N      int64
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
	sectionWatermarks byte = 8 // the subtask's watermark state (wmstate.go)
)

// subtaskSnapshot is a subtask's decoded snapshot.
type subtaskSnapshot struct {
	operators map[int][]byte
	position  []byte
	inputs    map[int][]*exchange.Buffer // by gate channel
	outputs   map[int][]*exchange.Buffer // by writer<<16 | channel
	finished  bool
	counts    []int64 // as channelCounts orders them; nil in older snapshots
	controls  []int64 // per output channel, in writer order; nil without active standby
	wms       []byte  // watermark state; nil in older snapshots
}

func appendSection(dst []byte, kind byte, id int, data []byte) []byte {
	dst = append(dst, kind)
	dst = binary.AppendUvarint(dst, uint64(id))
	dst = binary.AppendUvarint(dst, uint64(len(data)))
	return append(dst, data...)
}

func decodeSubtaskSnapshot(data []byte) (*subtaskSnapshot, error) {
	s := &subtaskSnapshot{operators: map[int][]byte{}, inputs: map[int][]*exchange.Buffer{}, outputs: map[int][]*exchange.Buffer{}}
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
			s.operators[int(id)] = body
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
		out = binary.AppendUvarint(out, uint64(len(b.B)))
		out = append(out, b.B...)
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

// alignment tracks the barriers of one checkpoint at a task with inputs.
//
// Aligned: each input is blocked once its barrier arrived; the snapshot is
// taken when all arrived. Unaligned: the first barrier (which overtook its
// channel's queue) takes the snapshot at once and forwards the barrier
// ahead of the output; the records each channel still delivers before its
// own barrier are kept as in-flight data. An aligned checkpoint that waits
// longer than the aligned timeout switches to the unaligned way.
type alignment struct {
	id      int64
	seen    []bool
	started time.Time
	// frozen is set once the snapshot was taken before all barriers
	// arrived (unaligned, or after the aligned timeout).
	frozen *frozen
	// inflight holds, per channel, the records delivered after the
	// snapshot and before the channel's barrier; count their records.
	inflight [][]*exchange.Buffer
	count    []int64
}

// onBarrier handles barrier e arriving on channel ch.
func (s *subtask) onBarrier(ch int, e exchange.Element) {
	a := s.align
	if a != nil && e.Checkpoint < a.id {
		return // a barrier of a checkpoint we already gave up
	}
	if a != nil && e.Checkpoint > a.id {
		// A newer checkpoint overtook an unfinished alignment: the older
		// one cannot complete here; give it up as Flink does.
		s.abortAlignment()
		a = nil
	}
	if a == nil && (e.Checkpoint <= s.lastCheckpoint || slices.Contains(s.aborted, e.Checkpoint)) {
		// Taken already, or aborted: an alignment started now could not
		// complete, as the barriers that came before the abort were
		// consumed, and its blocked channels would hold the job up.
		return
	}
	if a == nil {
		a = &alignment{id: e.Checkpoint, seen: make([]bool, len(s.chanState)), started: s.rt.opts.Now()}
		s.align = a
		if e.Unaligned {
			s.startInflight(a, true)
			if a.frozen == nil {
				return
			}
		}
	}
	if e.Unaligned && a.frozen != nil {
		// The records this barrier overtook are in flight.
		for _, b := range s.gate.AheadOfMarker(ch, e.Checkpoint) {
			a.inflight[ch] = append(a.inflight[ch], b)
			a.count[ch] += int64(b.N)
		}
	}
	a.seen[ch] = true
	if s.rt.opts.Checkpoint == Aligned && a.frozen == nil {
		s.gate.Block(ch)
	}
	s.maybeAligned()
	if s.align != nil {
		if err := s.inject(PointAlignment, a.id); err != nil {
			Fail(err)
		}
	}
}

// startInflight takes the snapshot before all barriers arrived and starts
// keeping in-flight records; priority says whether barriers overtake
// queues (unaligned) or follow them (a switch after the aligned timeout).
func (s *subtask) startInflight(a *alignment, priority bool) {
	a.frozen = s.freeze(a.id, s.rt.opts.Now().Sub(a.started), true, priority)
	if a.frozen == nil {
		s.abortAlignment() // the channels blocked so far read on
		return
	}
	a.inflight = make([][]*exchange.Buffer, len(s.chanState))
	a.count = make([]int64, len(s.chanState))
	for c, seen := range a.seen {
		if seen {
			s.gate.Unblock(c)
		}
	}
}

// checkAlignedTimeout switches a long alignment to the unaligned way.
func (s *subtask) checkAlignedTimeout() {
	a := s.align
	t := s.rt.opts.AlignedTimeout
	if a == nil || a.frozen != nil || t <= 0 || s.rt.opts.Checkpoint != Aligned {
		return
	}
	if s.rt.opts.Now().Sub(a.started) >= t {
		s.startInflight(a, false)
		s.maybeAligned()
	}
}

// maybeAligned completes the alignment once every channel that has not
// ended delivered the barrier.
func (s *subtask) maybeAligned() {
	a := s.align
	if a == nil {
		return
	}
	for c, seen := range a.seen {
		if !seen && s.chanState[c] != ended {
			return
		}
	}
	s.align = nil
	if a.frozen != nil {
		s.reportFrozen(a.frozen, a.inflight, a.count)
		return
	}
	waited := s.rt.opts.Now().Sub(a.started)
	s.takeSnapshot(a.id, waited, true)
	for c := range a.seen {
		s.gate.Unblock(c)
	}
}

// abortCheckpoint gives up checkpoint id, which the job aborted: its
// alignment, a barrier a restarted source deferred, and the barriers of
// it still to come (onBarrier).
func (s *subtask) abortCheckpoint(id int64) {
	if id > s.lastCheckpoint && !slices.Contains(s.aborted, id) {
		s.aborted = append(s.aborted, id)
	}
	if s.align != nil && s.align.id == id {
		s.abortAlignment()
	}
	if s.deferred == id {
		s.deferred = 0
	}
}

// abortAlignment gives up the current alignment and unblocks all inputs.
func (s *subtask) abortAlignment() {
	if s.align == nil {
		return
	}
	for c := range s.align.seen {
		s.gate.Unblock(c)
	}
	s.align = nil
}

// recordInflight keeps a copy of a data buffer delivered on ch between a
// snapshot taken before all barriers arrived and ch's barrier.
func (s *subtask) recordInflight(ch int, b *exchange.Buffer) {
	a := s.align
	if a == nil || a.frozen == nil || a.seen[ch] {
		return
	}
	a.inflight[ch] = append(a.inflight[ch], &exchange.Buffer{B: append([]byte(nil), b.B...), N: b.N})
	a.count[ch] += int64(b.N)
}
