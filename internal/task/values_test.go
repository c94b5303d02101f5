package task

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/plan"
)

type valueRecord struct {
	Key  int64
	Name string
}

type timed[T any] struct {
	ts int64
	v  T
}

type collect[T any] struct{ got []timed[T] }

func (c *collect[T]) Collect(ts int64, v T) { c.got = append(c.got, timed[T]{ts, v}) }

// nopSender stands for a channel to another process: it only keeps what
// it is given.
type nopSender struct{ sent []exchange.Element }

func (s *nopSender) SendTimed(_ context.Context, e exchange.Element) (time.Duration, error) {
	s.sent = append(s.sent, e)
	return 0, nil
}
func (s *nopSender) SendReplay(_ context.Context, e exchange.Element) error {
	s.sent = append(s.sent, e)
	return nil
}
func (s *nopSender) SendPriority(exchange.Element) {}

// Records of a transparent type reach a subtask of the same process as
// values, and the same records when the batch is encoded for whoever
// needs its bytes (a checkpoint's in-flight records, a remote receiver);
// a channel to another process gets encoded batches.
func TestRecordsPassAsValuesWithinAProcessAndEncodeToTheSameRecords(t *testing.T) {
	c := codec.MustFor[valueRecord]()
	gate := exchange.NewGate(1, 64)
	remote := &nopSender{}
	ctx := &Context{Ctx: context.Background(), MaxParallelism: 128, Metrics: &Metrics{}}
	w := NewWriter(ctx, c, plan.Broadcast, nil, []exchange.Channel{{Gate: gate, Index: 0}, {Remote: remote}})
	var want []timed[valueRecord]
	for i := range int64(3000) {
		v := valueRecord{Key: i, Name: strings.Repeat("x", int(i%7))}
		w.Collect(i*3-100, v)
		want = append(want, timed[valueRecord]{i*3 - 100, v})
	}
	w.Flush()

	byValue, fromBytes, remoteGot := &collect[valueRecord]{}, &collect[valueRecord]{}, &collect[valueRecord]{}
	d := NewDecoder(c, byValue, "test")
	var batches int
	for {
		_, e, ok := gate.Poll()
		if !ok {
			break
		}
		if e.Buf.Vals == nil {
			t.Fatal("a batch to a subtask of the same process holds encoded records, want values")
		}
		batches++
		vb := e.Buf.Vals.(*valueBatch[valueRecord])
		size := e.Buf.N * int(unsafe.Sizeof(valueRecord{})+8)
		for _, v := range vb.vals {
			size += len(v.Name)
		}
		if got := e.Buf.Size(); got != size {
			t.Fatalf("a batch of %d values counts %d bytes, want %d: the values and their strings", e.Buf.N, got, size)
		}
		cp := e.Buf.Copy()
		if !bytes.Equal(cp.B, e.Buf.Bytes()) {
			t.Fatal("Copy and Bytes of a batch of values encode differently")
		}
		if err := d.Decode(e.Buf, 0, e.Buf.N); err != nil {
			t.Fatal(err)
		}
		if err := NewDecoder(c, fromBytes, "test").Decode(cp, 0, cp.N); err != nil {
			t.Fatal(err)
		}
		exchange.PutBuffer(e.Buf)
	}
	for _, e := range remote.sent {
		if e.Buf.Vals != nil {
			t.Fatal("a batch to another process holds values, want encoded records")
		}
		if err := NewDecoder(c, remoteGot, "test").Decode(e.Buf, 0, e.Buf.N); err != nil {
			t.Fatal(err)
		}
	}
	if batches < 2 {
		t.Fatalf("%d batches of values, want the records split into several", batches)
	}
	for name, got := range map[string][]timed[valueRecord]{"as values": byValue.got, "encoded from values": fromBytes.got, "to another process": remoteGot.got} {
		if !slices.Equal(got, want) {
			t.Errorf("records %s: got %d records, want the %d sent, in order (first got %v)", name, len(got), len(want), got[:min(1, len(got))])
		}
	}
}

// A type whose copy is not its decoding (it holds a slice the sender
// could change) crosses even a local channel encoded.
func TestRecordsHoldingASliceCrossALocalChannelEncoded(t *testing.T) {
	c := codec.MustFor[[]int64]()
	gate := exchange.NewGate(1, 4)
	w := NewWriter(&Context{Ctx: context.Background(), MaxParallelism: 128, Metrics: &Metrics{}}, c, plan.Forward, nil,
		[]exchange.Channel{{Gate: gate, Index: 0}})
	s := []int64{1, 2}
	w.Collect(0, s)
	w.Flush()
	s[0] = 99 // the sender reuses its slice
	_, e, ok := gate.Poll()
	if !ok || e.Buf.Vals != nil {
		t.Fatalf("got element %v, want an encoded batch", e)
	}
	got := &collect[[]int64]{}
	if err := NewDecoder(c, got, "test").Decode(e.Buf, 0, e.Buf.N); err != nil {
		t.Fatal(err)
	}
	if len(got.got) != 1 || !slices.Equal(got.got[0].v, []int64{1, 2}) {
		t.Fatalf("got %v, want the record as it was sent", got.got)
	}
}

type sizedRecord struct {
	V []int64
}

func (r sizedRecord) AppendBinary(dst []byte) ([]byte, error) {
	return codec.MustFor[[]int64]().Append(dst, r.V), nil
}
func (r *sizedRecord) DecodeBinary(src []byte) (int, error) {
	return codec.MustFor[[]int64]().Decode(src, &r.V)
}
func (sizedRecord) ShareableValue()     {}
func (r sizedRecord) SizeInMemory() int { return 8 * cap(r.V) }

// A Shareable type that says what it holds (SizeInMemory) is counted by
// it, so that retained output is bounded by what it holds alive.
func TestABatchOfValuesCountsWhatAShareableTypeSaysItHolds(t *testing.T) {
	gate := exchange.NewGate(1, 4)
	w := NewWriter(&Context{Ctx: context.Background(), MaxParallelism: 128, Metrics: &Metrics{}}, codec.MustFor[sizedRecord](), plan.Forward, nil,
		[]exchange.Channel{{Gate: gate, Index: 0}})
	w.Collect(0, sizedRecord{V: make([]int64, 100)})
	w.Collect(0, sizedRecord{V: make([]int64, 10)})
	w.Flush()
	_, e, ok := gate.Poll()
	if !ok || e.Buf.Vals == nil {
		t.Fatalf("got element %v, want a batch of values", e)
	}
	want := 2*int(unsafe.Sizeof(sizedRecord{})+8) + 8*110
	if got := e.Buf.Size(); got != want {
		t.Fatalf("the batch counts %d bytes, want %d: the values and what they hold", got, want)
	}
}

// Measuring a batch of a type that says what it holds allocates nothing:
// each value converted to an interface would be copied to the heap.
func TestMeasuringABatchOfSizedValuesAllocatesNothing(t *testing.T) {
	b := &valueBatch[sizedRecord]{vals: []sizedRecord{{V: make([]int64, 3)}, {V: make([]int64, 5)}}}
	if n := testing.AllocsPerRun(100, func() { b.measure() }); n != 0 {
		t.Fatalf("measuring a batch of 2 values allocated %v times", n)
	}
}
