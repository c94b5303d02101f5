// Package exchange moves stream elements between tasks.
//
// A task's inputs form one Gate: a set of bounded FIFO channels, one per
// upstream subtask and edge. Senders block while their channel is full, which
// is how backpressure travels upstream. Records travel in batches (encoded by
// a codec into a Buffer); watermarks, idleness, barriers and end-of-input
// travel in-band on the same channel and keep FIFO order with the data.
package exchange

import (
	"sync"
	"sync/atomic"
)

// Kind is the kind of a stream element.
type Kind uint8

const (
	// Data carries a batch of encoded records.
	Data Kind = iota
	// Watermark says that no record with an event time <= Time follows on
	// this channel (except late records, which operators may drop).
	Watermark
	// Idle says that the channel carries no records for now; it does not hold
	// back the combined watermark until the next Data or Watermark element.
	Idle
	// Barrier marks checkpoint Checkpoint in the stream.
	Barrier
	// End says the channel is finished; nothing follows.
	End
	// Marker holds the place in a channel's FIFO order of a barrier that
	// overtook the queued elements (an unaligned checkpoint's barrier).
	Marker
	// Latency is a latency marker: Time holds the wall-clock time (Unix
	// nanoseconds) at which a source emitted it. It travels with the data,
	// so its age when a task receives it is the delay records suffer.
	Latency
	// Replay starts a sender's replay of its retained output to a
	// restarted receiver (upstream backup): the records that follow carry
	// sequence numbers from Seq on. A restarted receiver ignores its
	// channel until this element arrives.
	Replay
)

func (k Kind) String() string {
	switch k {
	case Data:
		return "data"
	case Watermark:
		return "watermark"
	case Idle:
		return "idle"
	case Barrier:
		return "barrier"
	case End:
		return "end"
	case Marker:
		return "marker"
	case Latency:
		return "latency"
	case Replay:
		return "replay"
	}
	return "unknown"
}

// Element is one item on a channel.
type Element struct {
	Kind Kind
	// Buf holds the records of a Data element. The receiver owns it and
	// returns it with PutBuffer when it has decoded the records.
	Buf *Buffer
	// Time is the watermark of a Watermark element.
	Time int64
	// Checkpoint is the checkpoint id of a Barrier element.
	Checkpoint int64
	// Unaligned marks a barrier of an unaligned checkpoint.
	Unaligned bool
	// Seq is the sequence number on its channel of the first record of a
	// Data element (records are numbered from 0 per channel), or where a
	// Replay element resumes.
	Seq int64
}

// Buffer is a batch of encoded records: N records back to back in B, each a
// varint event timestamp followed by the codec's encoding of the value.
type Buffer struct {
	B []byte
	N int
	// retained marks a buffer a sender keeps for replay (upstream
	// backup): receivers only read it and PutBuffer leaves it alone.
	retained atomic.Bool
}

// Retain marks b as kept by its sender for replay: PutBuffer will not
// recycle it until Release or Forget.
func (b *Buffer) Retain() { b.retained.Store(true) }

// Release ends Retain and returns b to the pool. Its sender calls it once
// no receiver can read b any more.
func (b *Buffer) Release() {
	b.retained.Store(false)
	PutBuffer(b)
}

// Forget ends Retain without recycling b, which a receiver may still
// read: the receiver's PutBuffer recycles it, or, if that already came,
// the garbage collector takes it.
func (b *Buffer) Forget() { b.retained.Store(false) }

// BufferSize is the size at which a sender ships a buffer.
const BufferSize = 32 << 10

var bufPool = sync.Pool{New: func() any { return &Buffer{B: make([]byte, 0, BufferSize+BufferSize/4)} }}

// GetBuffer returns an empty buffer from a pool.
func GetBuffer() *Buffer { return bufPool.Get().(*Buffer) }

// PutBuffer returns a buffer to the pool, unless its sender retains it.
// The caller must not use it again.
func PutBuffer(b *Buffer) {
	if b.retained.Load() || cap(b.B) > 4*BufferSize {
		return // let oversized buffers go
	}
	b.B = b.B[:0]
	b.N = 0
	bufPool.Put(b)
}
