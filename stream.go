package weir

import (
	"fmt"
	"time"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/operator"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/task"
)

// Stream is a stream of records of type T in a pipeline. It is a handle:
// copying it is cheap, and applying several operators to one stream sends
// every record to each of them.
type Stream[T any] struct {
	p     *Pipeline
	outs  []output // the ports the stream's records come from
	codec codec.Codec[T]
	part  plan.Partitioning // of the edge into the next operator
}

type output struct {
	n    *plan.Node
	port int
}

// Pipeline returns the pipeline the stream belongs to.
func (s Stream[T]) Pipeline() *Pipeline { return s.p }

// WithCodec sets the codec that encodes the stream's records when they
// cross a task boundary. Without it the engine uses codec.For[T], and
// records of a type built only of numbers, booleans and strings
// (codec.Transparent) pass to a task in the same process as values,
// not encoded; with a codec of your own they are always encoded.
func (s Stream[T]) WithCodec(c codec.Codec[T]) Stream[T] {
	s.codec = c
	return s
}

// OpOption configures one operator.
type OpOption func(*opConfig)

type opConfig struct {
	name        string
	uid         string
	parallelism int
	idleness    time.Duration // WithIdleness; only AssignTimestamps takes it
}

// Name names an operator; names appear in plans, metrics and errors.
func Name(name string) OpOption { return func(c *opConfig) { c.name = name } }

// UID gives an operator its identity across versions of the job: the
// key its state has in checkpoints and savepoints. A changed job (with
// operators added, removed, renamed or chained differently) restores the
// state of every operator whose uid it still has; a new operator starts
// empty, and state of an operator the job no longer has fails the restore
// unless it may be dropped (WithAllowNonRestoredState). Without UID an
// operator's uid is its name, "name#2" and so on for later operators of
// the same name, which adding an operator of that name earlier in the
// job shifts; give stateful operators a UID before their first savepoint.
// Uids must be unique within a job.
func UID(uid string) OpOption { return func(c *opConfig) { c.uid = uid } }

// Parallelism sets an operator's number of parallel subtasks.
func Parallelism(n int) OpOption { return func(c *opConfig) { c.parallelism = n } }

func opts(def string, os []OpOption) opConfig {
	c := opConfig{name: def}
	for _, o := range os {
		o(&c)
	}
	return c
}

// addNode adds a node reading the given streams' outputs.
func (p *Pipeline) addNode(c opConfig, kind plan.Kind, ports int, impl task.NodeImpl) *plan.Node {
	if c.idleness != 0 {
		p.setErr(fmt.Errorf("operator %q: WithIdleness applies only to AssignTimestamps", c.name))
	}
	return p.g.AddNode(&plan.Node{Name: c.name, UID: c.uid, Kind: kind, Parallelism: c.parallelism, Ports: ports, Impl: impl})
}

// connect feeds s into input i of n.
func connect[T any](s Stream[T], n *plan.Node, input int, part plan.Partitioning, hash func(T) uint64) {
	if part == plan.Forward {
		part = s.part
	}
	impl := &operator.Edge[T]{Codec: s.codec, Hash: hash}
	for _, o := range s.outs {
		s.p.g.Connect(o.n, o.port, n, input, part, impl)
	}
}

func newStream[T any](p *Pipeline, n *plan.Node, port int) Stream[T] {
	return Stream[T]{p: p, outs: []output{{n, port}}}
}

// Union merges streams of the same type into one. Records keep their
// order within each input stream; across inputs they interleave.
func Union[T any](first Stream[T], others ...Stream[T]) Stream[T] {
	s := first
	s.outs = append([]output(nil), first.outs...)
	for _, o := range others {
		if o.p != first.p {
			first.p.setErr(fmt.Errorf("union of streams from different pipelines"))
			continue
		}
		s.outs = append(s.outs, o.outs...)
	}
	return s
}

// Rebalance returns the stream redistributed round-robin over the next
// operator's subtasks, which evens out skewed load.
func Rebalance[T any](s Stream[T]) Stream[T] {
	s.part = plan.Rebalance
	return s
}

// Broadcast returns the stream with every record sent to every subtask of
// the next operator.
func Broadcast[T any](s Stream[T]) Stream[T] {
	s.part = plan.Broadcast
	return s
}
