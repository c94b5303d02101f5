// Package window implements event-time windows over keyed streams: the
// tumbling and sliding assigners and the operator that keeps their state
// per window and key group (bucket.go), and session windows, whose state
// is kept per key and window and merges on overlap (session.go; on
// processing time, session_proc.go). A window
// fires when the watermark passes its end, fires again for each record
// that arrives within the allowed lateness, and drops records later than
// that, to a side output or counted. Windows with a trigger (and
// evictor), on event time, processing time or the global window of
// count windows, run in triggered.go, as Flink's WindowOperator.
package window

import (
	"cmp"
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/operator"
	"github.com/weir-stream/weir/internal/operator/keyed"
	"github.com/weir-stream/weir/internal/task"
)

// Window is a half-open event-time interval [Start, End) in epoch
// milliseconds. Its encoding is part of the operators' snapshots.
type Window struct {
	Start int64 `json:"window_start"`
	End   int64 `json:"window_end"`
}

// MaxTimestamp is the last event time in the window, End-1. A window fires
// when the watermark reaches it, and its results carry it as event time.
func (w Window) MaxTimestamp() int64 { return w.End - 1 }

func (w Window) intersects(o Window) bool { return w.Start <= o.End && o.Start <= w.End }

func (w Window) cover(o Window) Window {
	return Window{Start: min(w.Start, o.Start), End: max(w.End, o.End)}
}

// byWindow orders windows by start, then end.
func byWindow(a, b Window) int {
	return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End))
}

// Sliding assigns windows of Size milliseconds starting every Slide
// milliseconds, aligned to the epoch plus Offset; tumbling windows are
// those whose slide is their size.
type Sliding struct{ Size, Slide, Offset int64 }

// windowStart returns the start of the window of length slide holding ts.
func windowStart(ts, offset, slide int64) int64 {
	r := (ts - offset) % slide
	if r < 0 {
		r += slide
	}
	return ts - r
}

// Assign appends the windows holding event time ts to dst.
func (s *Sliding) Assign(dst []Window, ts int64) []Window {
	last := windowStart(ts, s.Offset, s.Slide)
	for start := last; start > ts-s.Size; start -= s.Slide {
		dst = append(dst, Window{Start: start, End: start + s.Size})
	}
	return dst
}

func (s *Sliding) String() string {
	if s.Size == s.Slide {
		return fmt.Sprintf("tumbling(%v)", time.Duration(s.Size)*time.Millisecond)
	}
	return fmt.Sprintf("sliding(%v, %v)", time.Duration(s.Size)*time.Millisecond, time.Duration(s.Slide)*time.Millisecond)
}

// Validate returns an error if the windows are empty or leave gaps.
func (s *Sliding) Validate() error {
	if s.Size <= 0 || s.Slide <= 0 {
		return fmt.Errorf("window size and slide must be at least 1ms, got %s", s)
	}
	if s.Slide > s.Size {
		return fmt.Errorf("window slide must not exceed its size, got %s", s)
	}
	return nil
}

// Session assigns each record the window [ts, ts+Gap); the operator
// merges a key's overlapping windows.
type Session struct{ Gap int64 }

// Assign appends the record's own window to dst.
func (s *Session) Assign(dst []Window, ts int64) []Window {
	return append(dst, Window{Start: ts, End: ts + s.Gap})
}

func (s *Session) String() string {
	return fmt.Sprintf("session(%v)", time.Duration(s.Gap)*time.Millisecond)
}

// Validate returns an error if the gap is not positive.
func (s *Session) Validate() error {
	if s.Gap <= 0 {
		return fmt.Errorf("session gap must be at least 1ms, got %s", s)
	}
	return nil
}

// Node is a window operator folding each key's records per window into
// an accumulator of type Acc. Output port 0 receives what Emit emits;
// port 1, if connected, the records too late for every window.
type Node[K comparable, T, Acc, Out any] struct {
	// Key returns a record's key; Keys is the key type's codec and hash.
	Key  func(T) K
	Keys keyed.Keys[K]
	// Assign appends the windows of a record with event time ts to dst.
	Assign func(dst []Window, ts int64) []Window
	// Merging says windows merge when they overlap (sessions).
	Merging bool
	// Lateness is the allowed lateness in milliseconds.
	Lateness int64
	Create   func() Acc
	Add      func(Acc, T) Acc
	Merge    func(Acc, Acc) Acc
	// Emit emits the results of a key's window through its last
	// argument, which stamps them with the window's max timestamp.
	Emit func(K, Window, Acc, func(Out))
	// NewEmit, if not nil, returns the Emit of one subtask, given the
	// operator's outputs (as Build receives them), for window functions
	// that emit to side outputs too. During a firing, stamp returns the
	// event time the firing's results carry on the main output: the
	// window's max timestamp, or for the global window the time of what
	// fired it; side outputs carry the same.
	NewEmit func(outs []any, stamp func() int64) func(K, Window, Acc, func(Out))
	// Trigger, if not nil, decides when windows fire and purge (see
	// triggerOperator); Evictor, if not nil, removes records from a
	// window when it fires. Domain is the time windows are assigned on;
	// non-merging windows of another domain than EventTime need a
	// Trigger. Merging windows take neither: on event time and on
	// processing time (procSessionOperator) they fire at their end.
	Trigger Trigger[T]
	Evictor Evictor[T]
	Domain  Domain
}

// Deterministic reports that the window fires in an order its input
// decides when task.Context.Ordered is set: tumbling and sliding windows
// by window and key hash, session windows by timer time, key hash and
// window.
// Processing-time windows depend on the clock and are not deterministic.
func (n *Node[K, T, Acc, Out]) Deterministic() bool { return n.Domain != ProcessingTime }

// Redistribution says that the operator's state is keyed: it moves by key
// group when the task restores at another parallelism.
func (*Node[K, T, Acc, Out]) Redistribution() task.Redistribution { return task.ByKeyGroup }

// HandsOver says that the node's state can pass in memory at a live
// rescale (task.HandOverNode).
func (*Node[K, T, Acc, Out]) HandsOver() {}

func (n *Node[K, T, Acc, Out]) Build(ctx *task.Context, outs []any) (task.Built, error) {
	core := keyed.NewCore(ctx, n.Keys)
	if n.NewEmit != nil {
		own := *n // its Emit is set below, once the operator exists
		n = &own
	}
	next, late := operator.Out[Out](outs, 0), lateOutput[T](ctx, outs)
	var op interface {
		task.Operator
		stamp() int64
	}
	switch {
	case n.Trigger != nil:
		if n.Merging {
			return task.Built{}, fmt.Errorf("%s: merging windows take no trigger or evictor", ctx.Operator)
		}
		t := &triggerOperator[K, T, Acc, Out]{Node: n, core: core, next: next, late: late, ordered: ctx.Ordered}
		t.out = t.collect
		op = t
	case !n.Merging:
		b := &bucketOperator[K, T, Acc, Out]{Node: n, core: core, next: next, late: late, ordered: ctx.Ordered}
		b.out = b.collect
		op = b
	default:
		s := &sessionOperator[K, T, Acc, Out]{Node: n, core: core, next: next, late: late, ordered: ctx.Ordered}
		s.out = s.collect
		op = s
		if n.Domain == ProcessingTime {
			op = procSessionOperator[K, T, Acc, Out]{s}
		}
	}
	if n.NewEmit != nil {
		n.Emit = n.NewEmit(outs, op.stamp)
	}
	return task.Built{Op: op, Inputs: []any{op}}, nil
}

// lateOutput returns where a window operator sends records too late for
// every window they belong to: its late side output, or, without one,
// nowhere, counting them in the subtask's LateDropped metric.
func lateOutput[T any](ctx *task.Context, outs []any) task.Collector[T] {
	if len(outs) > 1 && outs[1] != nil {
		return outs[1].(task.Collector[T])
	}
	return lateDropped[T]{ctx.Metrics}
}

// lateDropped drops late records and counts them.
type lateDropped[T any] struct{ m *task.Metrics }

func (d lateDropped[T]) Collect(int64, T) { d.m.LateDropped.Add(1) }
