package weir

import (
	"fmt"
	"reflect"

	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/task"
)

// This file is side outputs: streams an operator emits besides its main
// output, each named by an OutputTag. Operators with a process context
// (Process, CoProcess, ProcessStream, ProcessWindowWithContext) emit to
// any tag with Output; a window's late data (WindowedStream.LateTo) and a
// deduplication's (DedupLateTo) are side outputs too. SideOutputOf takes
// the stream of a tag from the operator's main output stream.
//
// A side output is an output port of the operator's node: port 0 is the
// main output, the ports after it are added as the pipeline asks for
// side outputs. The port of each tag name is recorded in the operator's
// sideOutputs while the pipeline is built, and read by its subtasks.

// OutputTag names a side output of records of type T, such as late data
// of a window or records a process function sets aside.
type OutputTag[T any] struct {
	name string
	p    *Pipeline
	node *plan.Node
	port int
}

// NewOutputTag returns a tag for a side output. Within one operator a
// tag's name identifies it: two tags of the same name are one side
// output, and must carry the same type.
func NewOutputTag[T any](name string) *OutputTag[T] { return &OutputTag[T]{name: name} }

// Name returns the tag's name.
func (t *OutputTag[T]) Name() string { return t.name }

// bind makes port of n the side output of tag t, for SideOutput (and
// SideOutputOf).
func (t *OutputTag[T]) bind(p *Pipeline, n *plan.Node, port int) {
	t.p, t.node, t.port = p, n, port
	p.sideOutputs(n).set(p, t.name, port, reflect.TypeFor[T]())
}

// SideOutput returns the stream of a side output bound to one operator
// by a late-data option (WindowedStream.LateTo, DedupLateTo). The
// operator writing to the tag must have been added to the pipeline
// before. For side outputs a process function emits, use SideOutputOf.
func SideOutput[T any](tag *OutputTag[T]) Stream[T] {
	if tag.node == nil {
		panic(fmt.Sprintf("weir: side output %q is not attached to an operator yet", tag.name))
	}
	return newStream[T](tag.p, tag.node, tag.port)
}

// SideOutputOf returns the records that the operator whose main output
// is s emitted to tag (with Output, or as late data). s must be an
// operator's output as the operator returned it (or after WithCodec,
// Rebalance or Broadcast), not a Union; otherwise the pipeline fails to
// build, naming the tag. Records emitted to a tag no stream was taken of
// are dropped.
func SideOutputOf[T, U any](s Stream[U], tag *OutputTag[T]) Stream[T] {
	if len(s.outs) != 1 || s.outs[0].port != 0 {
		s.p.setErr(fmt.Errorf("side output %q: the stream is not one operator's main output", tag.name))
		return Stream[T]{p: s.p}
	}
	n := s.outs[0].n
	so := s.p.sides[n]
	if so == nil {
		s.p.setErr(fmt.Errorf("side output %q: operator %q emits no side outputs (only process functions and late-data options do)", tag.name, n.Name))
		return Stream[T]{p: s.p}
	}
	port, ok := so.ports[tag.name]
	if !ok {
		port = sidePort{port: n.Ports, typ: reflect.TypeFor[T]()}
		n.Ports++
		so.set(s.p, tag.name, port.port, port.typ)
	} else if port.typ != reflect.TypeFor[T]() {
		s.p.setErr(fmt.Errorf("side output %q of operator %q carries %v, not %v", tag.name, n.Name, port.typ, reflect.TypeFor[T]()))
		return Stream[T]{p: s.p}
	}
	return newStream[T](s.p, n, port.port)
}

// sideOutputs is one operator's side outputs: the port of each tag name.
type sideOutputs struct {
	node  *plan.Node
	ports map[string]sidePort
}

type sidePort struct {
	port int
	typ  reflect.Type
}

// newSideOutputs returns side outputs for an operator not added yet
// (attachSides).
func newSideOutputs() *sideOutputs { return &sideOutputs{ports: map[string]sidePort{}} }

// sideOutputs returns n's side outputs, making n an operator with them.
func (p *Pipeline) sideOutputs(n *plan.Node) *sideOutputs {
	if p.sides == nil {
		p.sides = map[*plan.Node]*sideOutputs{}
	}
	so := p.sides[n]
	if so == nil {
		so = newSideOutputs()
		p.attachSides(n, so)
	}
	return so
}

// attachSides makes so, made before n, n's side outputs.
func (p *Pipeline) attachSides(n *plan.Node, so *sideOutputs) {
	so.node = n
	if p.sides == nil {
		p.sides = map[*plan.Node]*sideOutputs{}
	}
	p.sides[n] = so
}

func (so *sideOutputs) set(p *Pipeline, name string, port int, typ reflect.Type) {
	if old, ok := so.ports[name]; ok && (old.port != port || old.typ != typ) {
		p.setErr(fmt.Errorf("side output %q of operator %q is bound twice", name, so.node.Name))
		return
	}
	so.ports[name] = sidePort{port, typ}
}

// sideEmitter is how one subtask of an operator emits to its side
// outputs: outs are its output collectors by port, ts the event time
// records get.
type sideEmitter struct {
	so   *sideOutputs
	outs []any
	ts   func() int64
	name string // the operator's, for errors
}

// OutputContext is implemented by the contexts of functions that can emit
// to side outputs: KeyedContext, RecordContext and WindowContext.
type OutputContext interface {
	sideEmitter() *sideEmitter
}

// Output emits v to the side output tag of the operator whose function
// ctx belongs to, with the event time of the record (or timer, or window)
// being handled, as the function's Emit would. It is valid only while the
// function handles that record. Records emitted to a tag that no stream
// was taken of (SideOutputOf) are dropped.
func Output[T any](ctx OutputContext, tag *OutputTag[T], v T) {
	e := ctx.sideEmitter()
	if e.so == nil {
		return
	}
	sp, ok := e.so.ports[tag.name]
	if !ok || sp.port >= len(e.outs) || e.outs[sp.port] == nil {
		return
	}
	c, ok := e.outs[sp.port].(task.Collector[T])
	if !ok {
		task.Failf("%s: side output %q carries %v, not %v", e.name, tag.name, sp.typ, reflect.TypeFor[T]())
	}
	c.Collect(e.ts(), v)
}
