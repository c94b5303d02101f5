package window

import (
	"strings"
	"testing"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/operator/keyed"
	"github.com/weir-stream/weir/internal/state"
	"github.com/weir-stream/weir/internal/task"
)

// State of a tumbling window written as an older weir wrote it, one bucket
// per window under key group 0, fails the restore with a message that
// says so, instead of losing the keys of the other key groups.
func TestWindowRefusesBucketsOfAnOlderLayout(t *testing.T) {
	kc, err := codec.For[int64]()
	if err != nil {
		t.Fatal(err)
	}
	wc, err := codec.For[Window]()
	if err != nil {
		t.Fatal(err)
	}
	old := state.NewBackend(0, 128, 128)
	tb, err := state.Register(old, "window-buckets", state.TableOptions[Window, map[int64]int64]{Key: wc, Value: state.MapCodec(kc, kc)})
	if err != nil {
		t.Fatal(err)
	}
	bucket := map[int64]int64{}
	for k := range int64(20) {
		bucket[k] = 1
	}
	tb.Put(0, Window{Start: 0, End: 1000}, bucket)
	enc, err := old.Snapshot(state.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	encoded, err := enc(nil)
	if err != nil {
		t.Fatal(err)
	}
	data := encoded.Data

	tumbling := &Sliding{Size: 1000, Slide: 1000} // Tumbling(time.Second)
	node := &Node[int64, int64, int64, int64]{Key: func(v int64) int64 { return v }, Keys: keyed.Keys[int64]{Codec: kc, Hash: keyed.Hasher(kc)},
		Assign: tumbling.Assign}
	ctx := &task.Context{Operator: "window", Parallelism: 1, MaxParallelism: 128, KeyGroupStart: 0, KeyGroupEnd: 128, Now: func() int64 { return 0 }}
	b, err := node.Build(ctx, []any{task.Collector[int64](discardInts{}), task.Collector[int64](discardInts{})})
	if err != nil {
		t.Fatal(err)
	}
	op := b.Op.(*bucketOperator[int64, int64, int64, int64])
	if err := op.Restore(data); err != nil {
		t.Fatal(err)
	}
	if err := op.Open(ctx); err == nil || !strings.Contains(err.Error(), "older weir") {
		t.Fatalf("restoring buckets of the older layout: got %v, want an error naming it", err)
	}
}

// discardInts is a collector that drops what it gets.
type discardInts struct{}

func (discardInts) Collect(int64, int64) {}
