package task

import (
	"sync/atomic"

	"github.com/weir-stream/weir/internal/dataflow"
)

// Gap recovery (at-most-once) restarts every operator with empty state and
// its sources where they stopped. An operator that must still know
// something about what it emitted before the failure — Deduplicate, the
// highest event time it forwarded — keeps it in a GapMark: a number it
// raises while it runs, which survives the failure as the sources'
// positions do (Options.GapMarks in, Runtime.GapMarks out).

// GapKey names one operator of one subtask: Op is its index in the chain.
type GapKey struct {
	dataflow.SubtaskID
	Op int
}

// GapMark is one operator's mark under at-most-once recovery
// (Context.Gap). Prev is the value the job's failed attempts raised it to,
// dataflow.MinWatermark if none did (in the first attempt, or before the operator
// raised it). Raise is called from the subtask's goroutine; a value it
// publishes is kept even if the subtask fails right after, so an operator
// raises the mark before it emits what the mark covers.
type GapMark struct {
	Prev int64
	cur  *atomic.Int64
	max  int64 // the last value stored in cur
}

// Raise lifts the mark to v if v is above it.
func (g *GapMark) Raise(v int64) {
	if v > g.max {
		g.max = v
		g.cur.Store(v)
	}
}

// newGapMarks allocates the marks of v's local subtasks, one per operator
// of its chain, starting at the values of Options.GapMarks.
func (r *Runtime) newGapMarks(vertex, parallelism, chain int) [][]atomic.Int64 {
	marks := make([][]atomic.Int64, parallelism)
	for i := range marks {
		if !r.IsLocal(dataflow.SubtaskID{Vertex: vertex, Subtask: i}) {
			continue
		}
		marks[i] = make([]atomic.Int64, chain)
		for op := range marks[i] {
			v, ok := r.opts.GapMarks[GapKey{dataflow.SubtaskID{Vertex: vertex, Subtask: i}, op}]
			if !ok {
				v = dataflow.MinWatermark
			}
			marks[i][op].Store(v)
		}
	}
	return marks
}

// gapMark returns the mark of operator op of subtask id, or nil when the
// runtime does not track marks (any guarantee but at-most-once).
func (r *Runtime) gapMark(id dataflow.SubtaskID, op int) *GapMark {
	if r.gaps == nil {
		return nil
	}
	cur := &r.gaps[id.Vertex][id.Subtask][op]
	v := cur.Load()
	return &GapMark{Prev: v, cur: cur, max: v}
}

// GapMarks returns the marks the operators raised, in this attempt or
// before it (with Options.TrackPositions).
func (r *Runtime) GapMarks() map[GapKey]int64 {
	out := map[GapKey]int64{}
	for v, subs := range r.gaps {
		for i, ops := range subs {
			for op := range ops {
				if m := ops[op].Load(); m != dataflow.MinWatermark {
					out[GapKey{dataflow.SubtaskID{Vertex: v, Subtask: i}, op}] = m
				}
			}
		}
	}
	return out
}
