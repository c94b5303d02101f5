package weir_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/weirtest"
)

// A source sends the watermark its records allow ahead of each barrier,
// not only at its periodic tick: a window those records closed fires
// before the snapshot, in the transaction of that checkpoint, instead of
// being stored in the snapshot. Here the periodic tick never comes, so
// without it both windows would fire at the end of the input, in one
// transaction.
func TestASourcesWatermarkGoesOutAheadOfEachBarrier(t *testing.T) {
	events := make([]ev, 2000)
	for i := range events {
		events[i] = ev{"a", int64(i + 1)} // [0,1000) gets 999, [1000,2000) 1000, [2000,3000) 1
	}
	p := weir.NewPipeline(weir.WithParallelism(1), weir.WithWatermarkInterval(time.Hour),
		weir.WithGuarantee(weir.ExactlyOnce), weir.WithCheckpoints(weir.CheckpointConfig{Interval: time.Millisecond}))
	// The source stops halfway, after the record at 1000, until a
	// snapshot took its position.
	src := weir.FromSource(p, "events", sliceSource[ev]{items: events, one: true, pauses: 1}, weir.WithTimestamps(evTime, 0))
	out := weirtest.NewSink[weir.Windowed[string, int64]]()
	weir.To(weir.AggregateWindow(weir.WindowBy(weir.KeyBy(src, evKey), weir.Tumbling(time.Second)), count{}), "out", out)
	run(t, p)
	// A record's Barrier is the last checkpoint its writer had
	// pre-committed when it wrote it: the one before its own transaction's.
	after := map[string]int64{}
	for _, w := range out.Visible() {
		r := w.Value
		after[fmt.Sprintf("%s [%d,%d) %d", r.Key, r.Window.Start, r.Window.End, r.Value)] = w.Barrier
	}
	first, ok1 := after["a [0,1000) 999"]
	second, ok2 := after["a [1000,2000) 1000"]
	if !ok1 || !ok2 {
		t.Fatalf("committed results %v, want both windows'", after)
	}
	if first >= second {
		t.Fatalf("the first window was written after checkpoint %d, the second after %d: want the first in the transaction of the pause's checkpoint, before the second's", first, second)
	}
}
