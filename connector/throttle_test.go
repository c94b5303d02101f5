package connector_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/collection"
)

// A throttled source gives its records, all of them, no faster than its
// rate (on synctest's fake clock), and a rate of 0 leaves the source as
// it is.
func TestThrottleHoldsASourceToItsRate(t *testing.T) {
	items := make([]int, 1000)
	for i := range items {
		items[i] = i
	}
	src := collection.Of(items...)
	if connector.Throttle(src, 0) != src {
		t.Fatal("a rate of 0 wrapped the source")
	}
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		r, err := connector.Throttle(src, 100).Open(ctx, connector.SubtaskInfo{Operator: "t", Parallelism: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		start := time.Now()
		buf := make([]int, 64)
		var got []int
		for {
			n, err := r.Read(ctx, buf)
			got = append(got, buf[:n]...)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if len(got) != len(items) || got[999] != 999 {
			t.Fatalf("read %d records, want %d", len(got), len(items))
		}
		if took := time.Since(start); took < 9*time.Second {
			t.Fatalf("1000 records at 100/s took %v of fake time, want about 10s", took)
		}
	})
}

// etReader is a reader of splits that tracks event time and has
// timestamps of its own.
type etReader struct {
	connector.Reader[int]
	used bool
}

func (r *etReader) SetEventTime(func(int) int64) {}
func (r *etReader) EventTimeProgress() int64     { return 42 }
func (r *etReader) UseTimestamps()               { r.used = true }
func (r *etReader) Timestamps() []int64          { return []int64{7} }

type etSource struct{ r *etReader }

func (s etSource) Open(ctx context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[int], error) {
	return s.r, nil
}

// Throttling keeps a reader's event-time abilities: a throttled reader
// of splits still tracks its slowest split, and a Read that holds back
// has no timestamps.
func TestThrottleKeepsTheReadersEventTimeAbilities(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &etReader{Reader: nil}
		r, err := connector.Throttle[int](etSource{inner}, 1).Open(context.Background(), connector.SubtaskInfo{Operator: "t", Parallelism: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		et, ok := r.(connector.EventTimer[int])
		if !ok || et.EventTimeProgress() != 42 {
			t.Fatalf("throttled reader %T lost the EventTimer of its reader", r)
		}
		tsr, ok := r.(connector.Timestamper)
		if !ok {
			t.Fatalf("throttled reader %T lost the Timestamper of its reader", r)
		}
		tsr.UseTimestamps()
		if !inner.used {
			t.Error("UseTimestamps did not reach the reader")
		}
		if n, err := r.Read(context.Background(), make([]int, 4)); n != 0 || err != nil || len(tsr.Timestamps()) != 0 {
			t.Errorf("a held-back Read: %d, %v, timestamps %v; want none", n, err, tsr.Timestamps())
		}
	})
}
