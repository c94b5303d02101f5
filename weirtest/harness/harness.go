// Package harness tests one function of a weir pipeline on its own: a
// keyed process function (NewProcess), a co-process function
// (NewCoProcess) or a window function with its assigner
// (NewAggregateWindow, NewReduceWindow, NewProcessWindow), as Flink's
// KeyedOneInputStreamOperatorTestHarness does. The test pushes records
// with their event times, advances the watermark and the processing
// time, reads and sets the function's keyed state by name, and reads
// what the operator emitted, all in the test's own goroutine: nothing
// runs in between, so every test is deterministic.
//
// A harness drives the operator a pipeline would run, built by the same
// calls of package weir (Process, CoProcess, WindowBy and a window
// function), with the real state backend, timers and clock reads; only
// the task around it is replaced. It is one subtask that owns every key
// group, in memory. As in a task:
//
//   - an event-time timer fires when a watermark reaches it, timers in
//     order of time, each with the key it was registered for; a watermark
//     behind the operator's is an error, one equal to it does nothing;
//   - a processing-time timer fires when the harness's clock reaches it:
//     when SetProcessingTime moves the clock, and after each record,
//     watermark or timer that left a due timer behind. The clock is the
//     operator's processing time (KeyedContext.ProcessingTime, the
//     time-to-live of state); it starts at 0 and moves only when the test
//     moves it;
//   - an error the function returns fails the operator: the call returns
//     it (wrapped as the engine wraps it, so errors.Is finds the
//     function's error), and every later call returns ErrFailed. A panic
//     of the function is not caught.
//
// Snapshot takes the operator's state and timers as a checkpoint would,
// and the Restore option starts a new harness from it, as a restart
// would: a test of recovery checks what the restored function does.
//
// The package lives under weirtest, beside the tools that run whole jobs
// against a reference, as net/http/httptest lives beside net/http; it
// is a package of its own so that a test of a function imports only it
// and package weir. To run a whole small pipeline instead, read it from
// connectors/collection's source and write it to its sink (see
// docs/testing.md).
package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/operator/keyed"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/task"
)

// ErrFailed is the error of every call on a harness whose operator failed
// before; the error also wraps that failure.
var ErrFailed = errors.New("harness: the operator failed before")

// ErrClosed is the error of every call on a harness after Close.
var ErrClosed = errors.New("harness: closed")

// Record is a record the operator emitted, with its event time.
type Record[T any] struct {
	Value     T
	Timestamp int64
}

// Values returns the values of rs, in order.
func Values[T any](rs []Record[T]) []T {
	out := make([]T, len(rs))
	for i, r := range rs {
		out[i] = r.Value
	}
	return out
}

// Operator is what every harness is (Process, CoProcess, Window): it
// lets SideOutput read any of them.
type Operator interface {
	sideRecords(tag any) (any, bool)
}

// Harness is the part every harness shares: the operator's clocks, its
// output, its snapshots. Process, CoProcess and Window embed it and add
// the inputs of their operator.
type Harness[K comparable, Out any] struct {
	op      task.Operator
	core    *keyed.Core[K]
	kind    string // the operator's implementation type, for restores
	wm      int64
	now     int64
	out     *recorder[Out]
	sides   map[any]any // *weir.OutputTag[T] -> *recorder[T]
	metrics *task.Metrics
	failed  error
	closed  bool
}

// recorder is the collector of one output port.
type recorder[T any] struct{ recs []Record[T] }

func (r *recorder[T]) Collect(ts int64, v T) {
	r.recs = append(r.recs, Record[T]{Value: v, Timestamp: ts})
}

// Output returns what the operator emitted on its main output since it
// was built or since the last TakeOutput, in order.
func (h *Harness[K, Out]) Output() []Record[Out] { return slices.Clone(h.out.recs) }

// TakeOutput returns what Output returns and forgets it.
func (h *Harness[K, Out]) TakeOutput() []Record[Out] {
	recs := h.out.recs
	h.out.recs = nil
	return recs
}

// Watermark returns the operator's current event-time watermark:
// weir.EndOfTime after EndInput, the lowest int64 before the first
// watermark.
func (h *Harness[K, Out]) Watermark() int64 { return h.wm }

// ProcessingTime returns the operator's processing time in epoch
// milliseconds.
func (h *Harness[K, Out]) ProcessingTime() int64 { return h.now }

// ProcessWatermark advances the operator's watermark to wm, firing the
// event-time timers (or windows) it reaches, in order of time. A wm equal
// to the current watermark does nothing; one behind it is an error and
// changes nothing, since a task never hands an operator a watermark that
// goes back.
func (h *Harness[K, Out]) ProcessWatermark(wm int64) error {
	if err := h.usable(); err != nil {
		return err
	}
	if wm < h.wm {
		return fmt.Errorf("harness: watermark %d is behind the operator's watermark %d", wm, h.wm)
	}
	if wm == h.wm {
		return nil
	}
	h.wm = wm
	return h.step(func() { h.op.Watermark(wm) })
}

// SetProcessingTime moves the operator's clock to now (epoch
// milliseconds) and fires the processing-time timers due by then, in
// order of time. A time behind the clock is an error and changes
// nothing.
func (h *Harness[K, Out]) SetProcessingTime(now int64) error {
	if err := h.usable(); err != nil {
		return err
	}
	if now < h.now {
		return fmt.Errorf("harness: processing time %d is behind the operator's clock %d", now, h.now)
	}
	h.now = now
	return h.step(func() {})
}

// EndInput ends the operator's input, as the end of a bounded source
// does: the watermark goes to weir.EndOfTime, firing every event-time
// timer and window, and then the operator learns that its input ended.
func (h *Harness[K, Out]) EndInput() error {
	if err := h.ProcessWatermark(dataflow.MaxWatermark); err != nil {
		return err
	}
	return h.step(func() {
		if err := h.op.EndInput(); err != nil {
			task.Fail(err)
		}
	})
}

// Close releases the operator's state. Every later call fails with
// ErrClosed.
func (h *Harness[K, Out]) Close() error {
	if h.closed {
		return nil
	}
	h.closed = true
	return h.op.Close()
}

// Snapshot is a harness's operator state and timers, as a checkpoint
// holds them, with its watermark and processing time. Restore starts a new harness of
// the same operator from it.
type Snapshot struct {
	kind string
	data []byte
	now  int64
	wm   int64
}

// Snapshot takes a snapshot of the operator's keyed state and timers.
// The harness goes on unchanged: later changes do not reach the
// snapshot.
func (h *Harness[K, Out]) Snapshot() (*Snapshot, error) {
	if err := h.usable(); err != nil {
		return nil, err
	}
	sn, ok := h.op.(task.Snapshotter)
	if !ok {
		return nil, fmt.Errorf("harness: the operator (%s) keeps no state to snapshot", h.kind)
	}
	var enc task.Encoded
	err := task.Catch(func() {
		freeze, err := sn.Snapshot(task.SnapshotOptions{Checkpoint: 1})
		if err == nil {
			enc, err = freeze(nil)
		}
		if err != nil {
			task.Fail(err)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("harness: snapshot: %w", err)
	}
	return &Snapshot{kind: h.kind, data: enc.Data, now: h.now, wm: h.wm}, nil
}

func (h *Harness[K, Out]) usable() error {
	if h.closed {
		return ErrClosed
	}
	if h.failed != nil {
		return fmt.Errorf("%w: %w", ErrFailed, h.failed)
	}
	return nil
}

// step runs f, then fires the processing-time timers due by the clock,
// as a task does after every step; a failure fails the harness.
func (h *Harness[K, Out]) step(f func()) error {
	if err := h.usable(); err != nil {
		return err
	}
	err := task.Catch(func() {
		f()
		if pt, ok := h.op.(task.ProcessingTimer); ok {
			if t, ok := pt.NextProcessingTime(); ok && t <= h.now {
				pt.FireProcessingTime(h.now)
			}
		}
	})
	if err != nil {
		h.failed = err
	}
	return err
}

func (h *Harness[K, Out]) sideRecords(tag any) (any, bool) {
	r, ok := h.sides[tag]
	return r, ok
}

// SideOutput returns the records the operator emitted to the side output
// tag, in order, with their event times; the tag must have been given to
// the harness (LateTo, CaptureSideOutput), or SideOutput returns nil.
func SideOutput[T any](h Operator, tag *weir.OutputTag[T]) []Record[T] {
	r, ok := h.sideRecords(tag)
	if !ok {
		return nil
	}
	return slices.Clone(r.(*recorder[T]).recs)
}

// Option configures a harness.
type Option func(*config)

type config struct {
	restore  *Snapshot
	keyCodec any // codec.Codec[K]
	// window is set by the options that only windows take, naming them.
	window   string
	lateness int64
	late     any // *weir.OutputTag[T]
	captures []capture
}

// capture asks for the records of a side output: tag is the
// *weir.OutputTag[T], stream adds a probe named name reading it (after
// the operator is added), port returns the collector of its port. A
// capture without stream is of a tag a function emits to with
// weir.Output, named name (sideOf).
type capture struct {
	tag    any
	name   string
	stream func(p *weir.Pipeline, name string) error
	port   func() any
}

// Restore starts the harness from s, a Snapshot of a harness of the same
// operator, as a restart starts a task from a checkpoint: with the
// snapshot's state and timers, and its watermark, which the operator is
// told once it is open (firing nothing the snapshot's operator had
// fired); and with the snapshot's processing time, since the wall clock
// does not go back across a restart. Its output starts empty.
func Restore(s *Snapshot) Option { return func(c *config) { c.restore = s } }

// KeyCodec sets the codec of the key type, as KeyedStream.WithKeyCodec
// does; keys without one need it to be kept in state.
func KeyCodec[K comparable](kc codec.Codec[K]) Option { return func(c *config) { c.keyCodec = kc } }

func newConfig(opts []Option) *config {
	c := &config{}
	for _, o := range opts {
		o(c)
	}
	return c
}

// The names of the probes build adds to the pipeline, which find the
// operator's node and the ports of its outputs in the plan.
const (
	mainProbe = "harness-main"
	sideProbe = "harness-side-"
)

// build builds the operator that add adds to a pipeline, opens it (after
// restoring c.restore) and returns the harness around it with the
// operator's node and its inputs. add returns the operator's main
// output.
func build[K comparable, Out any](c *config, add func(p *weir.Pipeline) weir.Stream[Out]) (*Harness[K, Out], *plan.Node, []any, error) {
	p := weir.NewPipeline(weir.WithName("harness"), weir.WithChaining(false))
	main := add(p)
	weir.Map(main, func(v Out) Out { return v }, weir.Name(mainProbe))
	for i, cp := range c.captures {
		probe := fmt.Sprintf("%s%d", sideProbe, i)
		if cp.stream == nil {
			sideOf(main, cp.name, probe)
			continue
		}
		if err := cp.stream(p, probe); err != nil {
			return nil, nil, nil, err
		}
	}
	cfg, err := p.Engine().Compile(context.Background())
	if err != nil {
		return nil, nil, nil, fmt.Errorf("harness: %w", err)
	}
	pl := cfg.Plan
	probes := map[string]*plan.Node{}
	for _, v := range pl.Vertices {
		for _, n := range v.Chain {
			probes[n.Name] = n
		}
	}
	node := probes[mainProbe].Inputs[0].From
	h := &Harness[K, Out]{kind: fmt.Sprintf("%T", node.Impl), wm: dataflow.MinWatermark, out: &recorder[Out]{},
		sides: map[any]any{}, metrics: &task.Metrics{}}
	outs := make([]any, node.Ports)
	outs[0] = h.out
	for i, cp := range c.captures {
		in := probes[fmt.Sprintf("%s%d", sideProbe, i)].Inputs[0]
		if in.From != node {
			return nil, nil, nil, fmt.Errorf("harness: the side output is not the operator's")
		}
		r := cp.port()
		outs[in.Port] = r
		h.sides[cp.tag] = r
	}
	ctx := &task.Context{Ctx: context.Background(), Job: "harness", Operator: node.Name, Parallelism: 1,
		MaxParallelism: pl.MaxParallelism, KeyGroupEnd: pl.MaxParallelism, Now: func() int64 { return h.now },
		Metrics: h.metrics, UID: pl.UIDs[node.ID]}
	built, err := node.Impl.(task.NodeImpl).Build(ctx, outs)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("harness: building %q: %w", node.Name, err)
	}
	h.op = built.Op
	holder, ok := built.Op.(keyed.Holder[K])
	if !ok {
		return nil, nil, nil, fmt.Errorf("harness: operator %s is not keyed by %T", h.kind, *new(K))
	}
	h.core = holder.KeyedCore()
	if s := c.restore; s != nil {
		if s.kind != h.kind {
			return nil, nil, nil, fmt.Errorf("harness: the snapshot is of operator %s, not %s", s.kind, h.kind)
		}
		if err := built.Op.(task.Snapshotter).Restore(s.data); err != nil {
			return nil, nil, nil, fmt.Errorf("harness: restoring %q: %w", node.Name, err)
		}
		h.now = s.now
	}
	err = task.Catch(func() {
		if err := built.Op.Open(ctx); err != nil {
			task.Fail(err)
		}
		if s := c.restore; s != nil && s.wm != dataflow.MinWatermark {
			// A restored task tells its opened operators the watermark
			// it restored, as the incarnation before had told them.
			h.wm = s.wm
			built.Op.Watermark(s.wm)
		}
	})
	if err != nil {
		built.Op.Close()
		return nil, nil, nil, fmt.Errorf("harness: opening %q: %w", node.Name, err)
	}
	return h, node, built.Inputs, nil
}

// keyedBy returns ks with the key codec of c, if c has one.
func keyedBy[K comparable, T any](c *config, ks weir.KeyedStream[K, T]) (weir.KeyedStream[K, T], error) {
	if c.keyCodec == nil {
		return ks, nil
	}
	kc, ok := c.keyCodec.(codec.Codec[K])
	if !ok {
		return ks, fmt.Errorf("harness: KeyCodec's codec is a %T, not a codec of the key type %T", c.keyCodec, *new(K))
	}
	return ks.WithKeyCodec(kc), nil
}
