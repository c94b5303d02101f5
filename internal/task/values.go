package task

import (
	"encoding/binary"
	"reflect"
	"sync"
	"unsafe"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/exchange"
)

// This file is the exchange of records as values between two subtasks of
// one process. When the edge's codec is transparent (codec.Transparent:
// a copy of a value is what decoding its encoding would give), a Writer
// fills the batches of its local channels with the values themselves and
// the receiving decoder hands them to its chain: no encoding, no
// decoding, no string copied. Whatever needs the batch's bytes — a
// receiver in another process (a channel moved there after a failure),
// a checkpoint's in-flight records, an active standby's log — encodes
// it through exchange.Buffer.Bytes or Copy.

// valueBatchBytes is about the memory a batch of values fills before the
// writer ships it, as exchange.BufferSize is for encoded batches; a
// batch holds between minValueBatch and maxValueBatch records.
const (
	valueBatchBytes = exchange.BufferSize
	minValueBatch   = 256
	maxValueBatch   = 4096
)

// valueBatch is a batch of records kept as values (exchange.Values).
type valueBatch[T any] struct {
	vals    []T
	ts      []int64
	codec   codec.Codec[T]
	pool    *sync.Pool
	strings []uintptr // offsets of the strings in a T, for measure
	size    int       // see measure
}

// AppendEncoded appends the records as an encoded batch holds them.
func (b *valueBatch[T]) AppendEncoded(dst []byte) []byte {
	var prev int64
	for i, v := range b.vals {
		dst = binary.AppendVarint(dst, b.ts[i]-prev)
		prev = b.ts[i]
		dst = b.codec.Append(dst, v)
	}
	return dst
}

// Size returns the size measure found when the batch was shipped.
func (b *valueBatch[T]) Size() int { return b.size }

// measure returns the memory of the values and of the strings they hold,
// so that upstream backup bounds what it retains by about what it holds
// alive. A type with a method SizeInMemory (a codec.Shareable type that
// holds slices) says its own. The writer measures a batch once, when it
// ships it; the values do not change afterwards.
func (b *valueBatch[T]) measure() int {
	var v T
	n := len(b.vals) * int(unsafe.Sizeof(v)+8)
	if _, ok := any(&v).(sizer); ok {
		// Through a pointer: a value converted to an interface would be
		// copied to the heap, an allocation per value.
		for i := range b.vals {
			n += any(&b.vals[i]).(sizer).SizeInMemory()
		}
		return n
	}
	for i := range b.vals {
		p := unsafe.Pointer(&b.vals[i])
		for _, off := range b.strings {
			n += len(*(*string)(unsafe.Add(p, off)))
		}
	}
	return n
}

// sizer is a value that says how many bytes it holds beyond its own
// size: what its slices and strings hold.
type sizer interface{ SizeInMemory() int }

// stringOffsets returns the offsets of the strings within a value of type
// t: t itself, or the fields and elements of structs and arrays.
func stringOffsets(t reflect.Type, base uintptr, out []uintptr) []uintptr {
	switch t.Kind() {
	case reflect.String:
		out = append(out, base)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			out = stringOffsets(f.Type, base+f.Offset, out)
		}
	case reflect.Array:
		for i := range t.Len() {
			out = stringOffsets(t.Elem(), base+uintptr(i)*t.Elem().Size(), out)
		}
	}
	return out
}

// Recycle clears the values, so that the batch holds no strings alive,
// and returns the batch to its writer's pool.
func (b *valueBatch[T]) Recycle() {
	clear(b.vals)
	b.vals, b.ts, b.size = b.vals[:0], b.ts[:0], 0
	b.pool.Put(b)
}

// valueBatches is a Writer's part in the exchange by value: which of its
// channels take batches of values, the batch each one fills, and the
// pool of batches its receivers return.
type valueBatches[T any] struct {
	transparent bool
	batchLen    int
	pool        sync.Pool
	byValue     []bool           // per channel: local, and T transparent
	open        []*valueBatch[T] // per channel: the batch being filled, or nil
}

func (v *valueBatches[T]) init(c codec.Codec[T], chans []exchange.Channel) {
	v.transparent = codec.Transparent(c)
	var zero T
	v.batchLen = min(max(valueBatchBytes/int(unsafe.Sizeof(zero)+8), minValueBatch), maxValueBatch)
	strs := stringOffsets(reflect.TypeFor[T](), 0, nil)
	v.pool.New = func() any {
		return &valueBatch[T]{vals: make([]T, 0, v.batchLen), ts: make([]int64, 0, v.batchLen), codec: c, pool: &v.pool, strings: strs}
	}
	v.route(chans)
}

// route decides, for the writer's channels from now on, which take
// values: those whose receiver is in this process.
func (v *valueBatches[T]) route(chans []exchange.Channel) {
	v.byValue, v.open = make([]bool, len(chans)), make([]*valueBatch[T], len(chans))
	for i, c := range chans {
		v.byValue[i] = v.transparent && c.Remote == nil
	}
}

// seal measures channel i's batch of values, if it fills one, before the
// writer ships it.
func (v *valueBatches[T]) seal(i int) {
	if vb := v.open[i]; vb != nil {
		vb.size = vb.measure()
	}
}

// newBuffer returns an empty buffer for channel i: one that holds values
// when the channel takes them.
func (v *valueBatches[T]) newBuffer(i int) *exchange.Buffer {
	b := exchange.GetBuffer()
	v.open[i] = nil
	if v.byValue[i] {
		vb := v.pool.Get().(*valueBatch[T])
		b.Vals, v.open[i] = vb, vb
	}
	return b
}

// sentBytes is what a batch counts in the bytes a subtask sent: its
// encoding, or for values their size in memory.
func sentBytes(b *exchange.Buffer) int {
	if b.Vals != nil {
		return b.Vals.Size()
	}
	return len(b.B)
}
