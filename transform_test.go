package weir_test

import (
	"io"
	"slices"
	"strings"
	"sync/atomic"
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

// FlatMapPerSubtask makes one function per subtask, whose state is that
// subtask's alone: each numbers the records it sees from 1, so the
// numbers of all subtasks add up to what one counter per subtask gives.
func TestFlatMapPerSubtaskGivesEachSubtaskAFunctionOfItsOwn(t *testing.T) {
	const n, par = 10000, 3
	p := weir.NewPipeline(weir.WithParallelism(par))
	src := weir.FromSource(p, "ints", sliceSource[int64]{items: ints(n)})
	var made atomic.Int64
	numbered := weir.FlatMapPerSubtask(src, func() func(int64, func(int64)) {
		made.Add(1)
		seen := int64(0) // this subtask's, unsynchronized
		return func(_ int64, emit func(int64)) {
			seen++
			emit(seen)
		}
	})
	out := &sink[int64]{}
	weir.To(numbered, "sink", out)
	run(t, p)
	if made.Load() != par {
		t.Fatalf("the function was made %d times, want once per subtask (%d)", made.Load(), par)
	}
	got := out.sorted(func(a, b int64) bool { return a < b })
	ones := 0
	for _, v := range got {
		if v == 1 {
			ones++
		}
	}
	if len(got) != n || ones != par {
		t.Fatalf("got %d records, %d of them numbered 1; want %d records, %d numbered 1 (one per subtask)", len(got), ones, n, par)
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
