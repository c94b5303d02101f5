package harness

import (
	"fmt"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/internal/operator/process"
	"github.com/weir-stream/weir/internal/task"
)

// Process is a harness of a weir.KeyedProcessFunction: the operator
// weir.Process runs.
type Process[K comparable, In, Out any] struct {
	*Harness[K, Out]
	state *functionState[K]
	in    task.Collector[In]
}

// NewProcess builds the operator weir.Process(weir.KeyBy(s, key), newFn)
// would run and opens it: newFn's function gets its Open (StateOpener)
// before NewProcess returns, and an error there is NewProcess's.
func NewProcess[K comparable, In, Out any](key func(In) K, newFn func() weir.KeyedProcessFunction[K, In, Out], opts ...Option) (*Process[K, In, Out], error) {
	c := newConfig(opts)
	if err := c.notWindow(); err != nil {
		return nil, err
	}
	var kerr error
	h, node, ins, err := build[K, Out](c, func(p *weir.Pipeline) weir.Stream[Out] {
		ks, err := keyedBy(c, weir.KeyBy(weir.FromSource(p, "input", collection.Of[In]()), key))
		kerr = err
		return weir.Process(ks, newFn)
	})
	if err != nil {
		return nil, err
	}
	if kerr != nil {
		h.Close()
		return nil, kerr
	}
	impl, ok := node.Impl.(*process.Node[K, In, Out, *weir.KeyedContext[K, Out]])
	if !ok {
		h.Close()
		return nil, fmt.Errorf("harness: weir.Process built a %T, which this harness does not know", node.Impl)
	}
	st := &functionState[K]{h: h.usable, core: h.core, open: func(f func(*weir.StateContext[K]) error) error {
		return impl.Hooks.Open(opener[K, *weir.KeyedContext[K, Out], In]{f}, h.core)
	}}
	return &Process[K, In, Out]{Harness: h, state: st, in: ins[0].(task.Collector[In])}, nil
}

// ProcessElement hands v, with event time ts (weir.NoTimestamp: none),
// to the function, with the key key(v) current.
func (h *Process[K, In, Out]) ProcessElement(v In, ts int64) error {
	return h.step(func() { h.in.Collect(ts, v) })
}

// PendingEventTimers returns the number of the function's event-time
// timers that have not fired.
func (h *Process[K, In, Out]) PendingEventTimers() int { return h.core.Events.Len() }

// PendingProcessingTimers returns the number of the function's
// processing-time timers that have not fired.
func (h *Process[K, In, Out]) PendingProcessingTimers() int { return h.core.Procs.Len() }

func (h *Process[K, In, Out]) functionState() *functionState[K] { return h.state }

// CoProcess is a harness of a weir.CoProcessFunction: the operator
// weir.CoProcess runs. Its watermark is the lower of its two inputs'
// (ProcessWatermark1 and ProcessWatermark2), as in a task;
// ProcessWatermark moves both.
type CoProcess[K comparable, In1, In2, Out any] struct {
	*Harness[K, Out]
	state    *functionState[K]
	in1      task.Collector[In1]
	in2      task.Collector[In2]
	wm1, wm2 int64
}

// NewCoProcess builds the operator weir.CoProcess(weir.KeyBy(a, key1),
// weir.KeyBy(b, key2), newFn) would run and opens it, as NewProcess does.
func NewCoProcess[K comparable, In1, In2, Out any](key1 func(In1) K, key2 func(In2) K,
	newFn func() weir.CoProcessFunction[K, In1, In2, Out], opts ...Option) (*CoProcess[K, In1, In2, Out], error) {
	c := newConfig(opts)
	if err := c.notWindow(); err != nil {
		return nil, err
	}
	var kerr error
	h, node, ins, err := build[K, Out](c, func(p *weir.Pipeline) weir.Stream[Out] {
		a, err1 := keyedBy(c, weir.KeyBy(weir.FromSource(p, "input1", collection.Of[In1]()), key1))
		b, err2 := keyedBy(c, weir.KeyBy(weir.FromSource(p, "input2", collection.Of[In2]()), key2))
		kerr = firstErr(err1, err2)
		return weir.CoProcess(a, b, newFn)
	})
	if err != nil {
		return nil, err
	}
	if kerr != nil {
		h.Close()
		return nil, kerr
	}
	impl, ok := node.Impl.(*process.CoNode[K, In1, In2, Out, *weir.KeyedContext[K, Out]])
	if !ok {
		h.Close()
		return nil, fmt.Errorf("harness: weir.CoProcess built a %T, which this harness does not know", node.Impl)
	}
	st := &functionState[K]{h: h.usable, core: h.core, open: func(f func(*weir.StateContext[K]) error) error {
		return impl.Hooks.Open(opener[K, *weir.KeyedContext[K, Out], In1]{f}, h.core)
	}}
	return &CoProcess[K, In1, In2, Out]{Harness: h, state: st, in1: ins[0].(task.Collector[In1]),
		in2: ins[1].(task.Collector[In2]), wm1: h.wm, wm2: h.wm}, nil
}

// ProcessElement1 hands v, a record of the first input with event time
// ts, to the function's ProcessElement1.
func (h *CoProcess[K, In1, In2, Out]) ProcessElement1(v In1, ts int64) error {
	return h.step(func() { h.in1.Collect(ts, v) })
}

// ProcessElement2 hands v, a record of the second input with event time
// ts, to the function's ProcessElement2.
func (h *CoProcess[K, In1, In2, Out]) ProcessElement2(v In2, ts int64) error {
	return h.step(func() { h.in2.Collect(ts, v) })
}

// ProcessWatermark1 advances the first input's watermark to wm, and the
// operator's to the lower of both inputs'. A wm behind the input's
// watermark is an error.
func (h *CoProcess[K, In1, In2, Out]) ProcessWatermark1(wm int64) error {
	if wm < h.wm1 {
		return fmt.Errorf("harness: watermark %d is behind the first input's watermark %d", wm, h.wm1)
	}
	h.wm1 = wm
	return h.Harness.ProcessWatermark(min(h.wm1, h.wm2))
}

// ProcessWatermark2 advances the second input's watermark, as
// ProcessWatermark1 does the first's.
func (h *CoProcess[K, In1, In2, Out]) ProcessWatermark2(wm int64) error {
	if wm < h.wm2 {
		return fmt.Errorf("harness: watermark %d is behind the second input's watermark %d", wm, h.wm2)
	}
	h.wm2 = wm
	return h.Harness.ProcessWatermark(min(h.wm1, h.wm2))
}

// ProcessWatermark advances the watermarks of both inputs to wm.
func (h *CoProcess[K, In1, In2, Out]) ProcessWatermark(wm int64) error {
	if err := h.Harness.ProcessWatermark(wm); err != nil {
		return err
	}
	h.wm1, h.wm2 = max(h.wm1, wm), max(h.wm2, wm)
	return nil
}

// PendingEventTimers returns the number of the function's event-time
// timers that have not fired.
func (h *CoProcess[K, In1, In2, Out]) PendingEventTimers() int { return h.core.Events.Len() }

// PendingProcessingTimers returns the number of the function's
// processing-time timers that have not fired.
func (h *CoProcess[K, In1, In2, Out]) PendingProcessingTimers() int { return h.core.Procs.Len() }

func (h *CoProcess[K, In1, In2, Out]) functionState() *functionState[K] { return h.state }

// opener hands the state context of a function's operator to open: the
// process operator's Open hook gives it to a StateOpener, the way it
// gives it to the user's function.
type opener[K comparable, C, In any] struct {
	open func(*weir.StateContext[K]) error
}

func (opener[K, C, In]) ProcessElement(C, In) error            { return nil }
func (o opener[K, C, In]) Open(sc *weir.StateContext[K]) error { return o.open(sc) }

func (c *config) notWindow() error {
	if c.window != "" {
		return fmt.Errorf("harness: %s applies to window harnesses only", c.window)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
