package task

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/weir-stream/weir/codec"
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

// SubtaskID names one subtask of a plan.
type SubtaskID struct {
	Vertex, Subtask int
}

func (id SubtaskID) String() string { return fmt.Sprintf("%d.%d", id.Vertex, id.Subtask) }

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
	Subtask    SubtaskID
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

// Channel names one channel: subtask From of edge Edge's source sends to
// subtask To of its target.
type Channel struct {
	Edge, From, To int
}

// ChannelCount is a record count on a channel.
type ChannelCount struct {
	Channel
	Sender bool
	N      int64
}

// control is a message from the job to a subtask.
type control struct {
	kind       controlKind
	checkpoint int64
}

type controlKind int

const (
	ctlTrigger controlKind = iota // take checkpoint (sources, finished subtasks)
	ctlComplete
	ctlAbort
	ctlRelease // a finished subtask may exit
)

// Section kinds of a subtask snapshot.
const (
	sectionOperator byte = 1 // an operator's state, by node ID
	sectionPosition byte = 2 // the source position
	sectionChannels byte = 3 // in-flight records of unaligned checkpoints
	sectionFinished byte = 4 // the subtask had finished its input
)

// subtaskSnapshot is a subtask's decoded snapshot.
type subtaskSnapshot struct {
	operators map[int][]byte
	position  []byte
	channels  []byte
	finished  bool
}

func appendSection(dst []byte, kind byte, id int, data []byte) []byte {
	dst = append(dst, kind)
	dst = binary.AppendUvarint(dst, uint64(id))
	dst = binary.AppendUvarint(dst, uint64(len(data)))
	return append(dst, data...)
}

func decodeSubtaskSnapshot(data []byte) (*subtaskSnapshot, error) {
	s := &subtaskSnapshot{operators: map[int][]byte{}}
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
		case sectionChannels:
			s.channels = body
		case sectionFinished:
			s.finished = true
		default:
			return nil, fmt.Errorf("subtask snapshot: unknown section kind %d: %w", kind, codec.ErrCorrupt)
		}
	}
	return s, nil
}

// alignment tracks the barriers of one checkpoint at a task with inputs.
type alignment struct {
	id      int64
	seen    []bool
	started time.Time
	// inflight holds, for unaligned checkpoints, the encoded records each
	// channel delivered after the snapshot and before its barrier.
	inflight [][]byte
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
	if e.Checkpoint <= s.lastCheckpoint {
		return
	}
	if a == nil {
		a = &alignment{id: e.Checkpoint, seen: make([]bool, len(s.chanState)), started: s.rt.opts.Now()}
		s.align = a
		if s.rt.opts.Checkpoint == Unaligned {
			// Snapshot at once and forward the barrier; record what the
			// other channels still deliver before their barriers.
			s.takeSnapshot(a.id, 0, true)
			a.inflight = make([][]byte, len(s.chanState))
		}
	}
	a.seen[ch] = true
	if s.rt.opts.Checkpoint == Aligned {
		s.gate.Block(ch)
	}
	s.maybeAligned()
	if s.align != nil {
		if err := s.inject(PointAlignment, a.id); err != nil {
			Fail(err)
		}
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
	if s.rt.opts.Checkpoint == Unaligned {
		var ch []byte
		for c, recs := range a.inflight {
			ch = appendSection(ch, sectionChannels, c, recs)
		}
		s.finishUnaligned(a.id, ch)
		return
	}
	waited := s.rt.opts.Now().Sub(a.started)
	s.takeSnapshot(a.id, waited, true)
	for c := range a.seen {
		s.gate.Unblock(c)
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

// recordInflight keeps a copy of a data buffer delivered on ch between an
// unaligned snapshot and ch's barrier.
func (s *subtask) recordInflight(ch int, b *exchange.Buffer) {
	a := s.align
	if a == nil || a.inflight == nil || a.seen[ch] {
		return
	}
	rec := binary.AppendUvarint(a.inflight[ch], uint64(b.N))
	rec = binary.AppendUvarint(rec, uint64(len(b.B)))
	a.inflight[ch] = append(rec, b.B...)
}
