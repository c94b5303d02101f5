package weir_test

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/weir-stream/weir"
)

var errEOF = io.EOF

func ints(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}

func TestMapFilterFlatMap(t *testing.T) {
	for _, par := range []int{1, 2, 8} {
		p := weir.NewPipeline(weir.WithParallelism(par))
		src := weir.FromSource(p, "ints", sliceSource[int64]{items: ints(10000)})
		sq := weir.Map(src, func(v int64) int64 { return v * 2 })
		even := weir.Filter(sq, func(v int64) bool { return v%4 == 0 })
		dup := weir.FlatMap(even, func(v int64, emit func(string)) {
			emit("a")
			emit(strings.Repeat("b", int(v%3)))
		})
		out := &sink[string]{}
		weir.To(dup, "sink", out)
		run(t, p)
		got := out.sorted(func(a, b string) bool { return a < b })
		if len(got) != 10000 {
			t.Fatalf("parallelism %d: got %d records, want 10000", par, len(got))
		}
		if n := strings.Count(strings.Join(got, ""), "a"); n != 5000 {
			t.Fatalf("parallelism %d: got %d a's, want 5000", par, n)
		}
	}
}

func TestUnionRebalanceBroadcast(t *testing.T) {
	p := weir.NewPipeline(weir.WithParallelism(3))
	a := weir.FromSource(p, "a", sliceSource[int64]{items: ints(100)})
	b := weir.FromSource(p, "b", sliceSource[int64]{items: ints(50)}, weir.SourceParallelism(1))
	u := weir.Union(a, b)
	reb := weir.Map(weir.Rebalance(u), func(v int64) int64 { return v }, weir.Parallelism(2))
	out := &sink[int64]{}
	weir.To(reb, "out", out)
	bc := &sink[int64]{}
	weir.To(weir.Broadcast(b), "bc", bc, weir.Parallelism(4))
	run(t, p)
	got := out.sorted(func(a, b int64) bool { return a < b })
	want := append(ints(100), ints(50)...)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("union: got %d records, want %d", len(got), len(want))
	}
	if n := len(bc.recs); n != 200 {
		t.Fatalf("broadcast to 4 subtasks: got %d records, want 200", n)
	}
}
