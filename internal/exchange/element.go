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
	// Data carries a batch of records (see Buffer).
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
	// Buf holds the records of a Data element. The receiver holds it and
	// returns it with PutBuffer when it has decoded the records.
	Buf *Buffer
	// Time is the watermark of a Watermark element.
	Time int64
	// Checkpoint is the checkpoint id of a Barrier element.
	Checkpoint int64
	// Unaligned marks a barrier of an unaligned checkpoint.
	Unaligned bool
	// MustAlign marks a barrier, in FIFO order, of a checkpoint every
	// receiver aligns whatever its checkpoint mode (a savepoint's; see
	// input.Element.MustAlign).
	MustAlign bool
	// Seq is the sequence number on its channel of the first record of a
	// Data element (records are numbered from 0 per channel), or where a
	// Replay element resumes.
	Seq int64
}

// Buffer is a batch of encoded records: N records back to back in B, each a
// varint event timestamp followed by the codec's encoding of the value.
//
// A buffer from GetBuffer counts its holders: the one that got it, each
// further holder that Retain added (a sender that keeps it for replay,
// each extra delivery of it), each returning it once with PutBuffer
// (Release). It goes back to the pool when the last one does, so a
// buffer one holder is done with is never handed to another writer
// while someone still reads it. A buffer made otherwise (a copy kept in
// a log, records decoded from a checkpoint) is never pooled: PutBuffer
// leaves it to the garbage collector.
//
// A buffer between two subtasks of one process may hold its records as
// values instead (Vals), when their codec says a value passes as it is
// (codec.Transparent): the receiver then takes them without decoding.
// Whoever needs the bytes — a remote receiver, a copy kept in a
// checkpoint or a log — asks Bytes or Copy, which encode the values.
type Buffer struct {
	B []byte
	N int
	// Vals, when not nil, holds the N records as values and B is unused
	// until Bytes encodes them into it. A sender fills Vals only before
	// it ships the buffer; afterwards the values do not change.
	Vals Values
	// refs counts the holders of a pooled buffer.
	refs   atomic.Int32
	pooled bool // from the pool; set when it is made
	// encoded reports that B holds the encoding of Vals (see Bytes); mu
	// orders the holders that ask for it at once.
	encoded bool
	mu      sync.Mutex
}

// Values is a batch of records kept as values of the sender's type: the
// sending task's writer makes it and the receiving task's decoder knows
// its type. Neither the engine nor a codec of another type reads it.
type Values interface {
	// AppendEncoded appends the records as B holds them: each a varint
	// timestamp delta from the one before (the first from 0) and the
	// codec's encoding.
	AppendEncoded(dst []byte) []byte
	// Size returns about how many bytes of memory the values hold, for
	// metrics and the bounds on retained output.
	Size() int
	// Recycle takes the values back once the buffer's last holder
	// returned it; nobody reads them afterwards.
	Recycle()
}

// Bytes returns the records encoded: B, encoded from Vals once when the
// buffer holds values. The caller must hold b and must not change the
// bytes.
func (b *Buffer) Bytes() []byte {
	if b.Vals == nil {
		return b.B
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.encoded {
		b.B = b.Vals.AppendEncoded(b.B[:0])
		b.encoded = true
	}
	return b.B
}

// Copy returns a buffer of its own, never pooled, with b's records
// encoded: what a checkpoint or a log keeps of a buffer its holders
// recycle. Unlike Bytes it caches nothing in b, so a writer may copy the
// buffer it still fills.
func (b *Buffer) Copy() *Buffer {
	if b.Vals == nil {
		return &Buffer{B: append([]byte(nil), b.B...), N: b.N}
	}
	return &Buffer{B: b.Vals.AppendEncoded(nil), N: b.N}
}

// Size returns about how many bytes of memory the records hold: the
// capacity of B, or the values' size.
func (b *Buffer) Size() int {
	if b.Vals != nil {
		return b.Vals.Size()
	}
	return cap(b.B)
}

// Retain adds a holder to b, which will return it with PutBuffer or
// Release: a sender that keeps b for replay to a restarted receiver
// (upstream backup), or a sender that delivers b once more (a replay).
// The caller must hold b.
func (b *Buffer) Retain() {
	if b.pooled {
		b.refs.Add(1)
	}
}

// Release ends a Retain: it is PutBuffer, named for the sender that
// drops b from its retained output.
func (b *Buffer) Release() { PutBuffer(b) }

// BufferSize is the size at which a sender ships a buffer.
const BufferSize = 32 << 10

var bufPool = sync.Pool{New: func() any { return &Buffer{B: make([]byte, 0, BufferSize+BufferSize/4), pooled: true} }}

// GetBuffer returns an empty buffer from a pool, with one holder: the
// caller.
func GetBuffer() *Buffer {
	b := bufPool.Get().(*Buffer)
	b.refs.Store(1)
	return b
}

// PutBuffer gives up one holder's use of b; the last one returns it to
// the pool. The caller must not use it again. A buffer returned more
// often than it was got and retained is a broken invariant: it would
// reach two writers at once, so PutBuffer panics.
func PutBuffer(b *Buffer) {
	if !b.pooled {
		return
	}
	switch n := b.refs.Add(-1); {
	case n > 0:
		return
	case n < 0:
		panic("exchange: a buffer was returned to the pool more often than it was held")
	}
	if v := b.Vals; v != nil {
		b.Vals, b.encoded = nil, false
		v.Recycle()
	}
	if cap(b.B) > 4*BufferSize {
		return // let oversized buffers go
	}
	b.B = b.B[:0]
	b.N = 0
	bufPool.Put(b)
}
