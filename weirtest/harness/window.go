package harness

import (
	"fmt"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/internal/task"
)

// Window is a harness of a window function over a keyed stream: the
// operator that weir.WindowBy with an assigner and AggregateWindow,
// ReduceWindow or ProcessWindow runs. A window fires when the watermark
// reaches its max timestamp, and its results carry that timestamp.
type Window[K comparable, T, Out any] struct {
	*Harness[K, Out]
	in task.Collector[T]
}

// NewAggregateWindow builds the operator
// weir.AggregateWindow(weir.WindowBy(weir.KeyBy(s, key), assigner), agg)
// would run. Options: AllowedLateness, LateTo, KeyCodec, Restore.
func NewAggregateWindow[K comparable, T, Acc, Out any](key func(T) K, assigner weir.WindowAssigner, agg weir.Aggregator[T, Acc, Out], opts ...Option) (*Window[K, T, weir.Windowed[K, Out]], error) {
	return newWindow(key, assigner, opts, func(w weir.WindowedStream[K, T]) weir.Stream[weir.Windowed[K, Out]] {
		return weir.AggregateWindow(w, agg)
	})
}

// NewReduceWindow builds the operator
// weir.ReduceWindow(weir.WindowBy(weir.KeyBy(s, key), assigner), reduce)
// would run. Options as NewAggregateWindow's.
func NewReduceWindow[K comparable, T any](key func(T) K, assigner weir.WindowAssigner, reduce func(a, b T) T, opts ...Option) (*Window[K, T, weir.Windowed[K, T]], error) {
	return newWindow(key, assigner, opts, func(w weir.WindowedStream[K, T]) weir.Stream[weir.Windowed[K, T]] {
		return weir.ReduceWindow(w, reduce)
	})
}

// NewProcessWindow builds the operator
// weir.ProcessWindow(weir.WindowBy(weir.KeyBy(s, key), assigner), fn)
// would run. An error of fn fails the operator. Options as
// NewAggregateWindow's.
func NewProcessWindow[K comparable, T, Out any](key func(T) K, assigner weir.WindowAssigner,
	fn func(key K, win weir.Window, records []T, emit func(Out)) error, opts ...Option) (*Window[K, T, Out], error) {
	return newWindow(key, assigner, opts, func(w weir.WindowedStream[K, T]) weir.Stream[Out] {
		return weir.ProcessWindow(w, fn)
	})
}

func newWindow[K comparable, T, Out any](key func(T) K, assigner weir.WindowAssigner, opts []Option,
	apply func(weir.WindowedStream[K, T]) weir.Stream[Out]) (*Window[K, T, Out], error) {
	c := newConfig(opts)
	for _, cp := range c.captures {
		if cp.stream == nil {
			return nil, fmt.Errorf("harness: CaptureSideOutput(side output %q) applies to process harnesses only: window functions emit to no side output", cp.name)
		}
	}
	var cerr error
	h, _, ins, err := build[K, Out](c, func(p *weir.Pipeline) weir.Stream[Out] {
		// The harness gives each record its time itself (ProcessElement);
		// the source only declares that its records carry event time, as
		// a window's input must.
		stamped := weir.WithTimestamps(func(T) int64 { return 0 }, 0)
		ks, err := keyedBy(c, weir.KeyBy(weir.FromSource(p, "input", collection.Of[T](), stamped), key))
		cerr = err
		w := weir.WindowBy(ks, assigner).AllowedLateness(time.Duration(c.lateness) * time.Millisecond)
		if c.late != nil {
			tag, ok := c.late.(*weir.OutputTag[T])
			if !ok {
				cerr = fmt.Errorf("harness: LateTo's tag is a %T, not a tag of the window's records (%T)", c.late, *new(T))
			} else {
				w = w.LateTo(tag)
			}
		}
		return apply(w)
	})
	if cerr != nil {
		if h != nil {
			h.Close()
		}
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	return &Window[K, T, Out]{Harness: h, in: ins[0].(task.Collector[T])}, nil
}

// ProcessElement hands v, with event time ts, to the window operator: it
// joins the windows the assigner gives it, or, when the watermark has
// passed all of them by more than the allowed lateness, goes to the late
// side output (LateTo) or is dropped (LateDropped).
func (h *Window[K, T, Out]) ProcessElement(v T, ts int64) error {
	return h.step(func() { h.in.Collect(ts, v) })
}

// LateDropped returns the number of records dropped as too late for
// every window, for want of a late side output.
func (h *Window[K, T, Out]) LateDropped() int64 { return h.metrics.LateDropped.Load() }

// AllowedLateness keeps a window's state for d after the watermark
// passed its end, as WindowedStream.AllowedLateness does. For window
// harnesses only.
func AllowedLateness(d time.Duration) Option {
	return func(c *config) {
		c.window = "AllowedLateness"
		c.lateness = d.Milliseconds()
	}
}

// LateTo sends the records too late for every window to the side output
// tag, as WindowedStream.LateTo does; SideOutput(h, tag) returns them.
// For window harnesses only.
func LateTo[T any](tag *weir.OutputTag[T]) Option {
	return func(c *config) {
		c.window = "LateTo"
		c.late = tag
		c.captures = append(c.captures, capture{tag: tag,
			stream: func(p *weir.Pipeline, name string) (err error) {
				defer func() {
					if r := recover(); r != nil { // the tag is not the operator's
						err = fmt.Errorf("harness: %v", r)
					}
				}()
				weir.Map(weir.SideOutput(tag), func(v T) T { return v }, weir.Name(name))
				return nil
			},
			port: func() any { return &recorder[T]{} }})
	}
}
