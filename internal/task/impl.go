package task

import (
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/plan"
)

// This file holds the interfaces through which the root package gives the
// runtime its operators (NodeImpl), its typed channels (EdgeImpl) and its
// sources (SourceRunner), and the determinism that decides whether a
// subtask regenerates its output exactly (ReplayDeterministic).

// NodeImpl builds one logical node's operator for a subtask. Package weir
// implements it for every operator kind; plan.Node.Impl holds it.
type NodeImpl interface {
	// Build creates the operator. outs[p] is the Collector of output port
	// p's record type, or nil when nothing consumes the port (the operator
	// then discards that output).
	Build(ctx *Context, outs []any) (Built, error)
}

// Built is a node's operator for one subtask.
type Built struct {
	// Op is the control side; never nil.
	Op Operator
	// Inputs holds, per logical input, the Collector of the input's record
	// type. Empty for sources.
	Inputs []any
	// Source reads input; set only for source nodes.
	Source SourceRunner
}

// EdgeImpl is the typed side of an edge carrying records of one type:
// plan.Edge.Impl holds it.
type EdgeImpl interface {
	// NewWriter returns a Collector of the edge's record type that sends to
	// chans, and its control side.
	NewWriter(ctx *Context, part plan.Partitioning, chans []exchange.Channel) (collector any, w ChannelWriter, err error)
	// NewDecoder returns a decoder pushing decoded records into target, a
	// Collector of the edge's record type.
	NewDecoder(target any, where string) (Decoder, error)
	// Fanout combines several Collectors of the edge's type into one.
	Fanout(collectors []any) any
}

// SourceRunner drives a source for one subtask. The task calls Open, then
// Read and Emit in turns, each pair moving one batch into the chain, until
// Read reports the end of input, then Close.
type SourceRunner interface {
	// Open opens the source at pos (nil: the beginning).
	Open(ctx *Context, pos []byte) error
	// Read reads at most one batch. n is the number of records read; eof
	// reports the end of a bounded input.
	Read() (n int, eof bool, err error)
	// Emit pushes the batch just read into the chain.
	Emit()
	// Position is the position after the last batch read.
	Position() []byte
	// Watermark returns the watermark the records emitted so far allow.
	Watermark() int64
	// Close releases the source.
	Close() error
}

// WatermarkGenerator is an optional ability of a SourceRunner whose
// watermark depends on more than its reader's position, such as the
// highest event time it has seen. The task stores that state in the
// subtask's snapshot with the position and the watermarks already
// emitted, and gives it back on every restore from the snapshot, so that
// the restored source emits its watermarks at the same places as the
// incarnation it replaces.
type WatermarkGenerator interface {
	// WatermarkState returns the generator's state after the last batch
	// emitted. It is called between batches, on the subtask's goroutine.
	WatermarkState() []byte
	// RestoreWatermarkState sets the state a snapshot holds. It is called
	// before Open; an error says the state is not the runner's.
	RestoreWatermarkState(data []byte) error
}

// Deterministic is an optional ability of a NodeImpl: given the same
// input records in the same order, its operator emits the same records in
// the same order (a map or a filter; a window when Context.Ordered is
// set). A source node is
// deterministic when its connector is (connector.Deterministic).
type Deterministic interface {
	Deterministic() bool
}

// ReplayDeterministic reports whether a restarted subtask of v regenerates
// its output exactly, record for record on every channel, from its
// restored state: v has no outputs, or every node of its chain is
// Deterministic and its input order cannot vary (a source, a single input
// channel, or, with logged, several channels whose consumption order the
// runtime logs and a restarted subtask repeats). Under fine-grained
// failover such a subtask restarts alone; otherwise its consumers restart
// with it.
func ReplayDeterministic(v *plan.Vertex, logged bool) bool {
	if len(v.Outputs) == 0 {
		return true
	}
	for _, n := range v.Chain {
		d, ok := n.Impl.(Deterministic)
		if !ok || !d.Deterministic() {
			return false
		}
	}
	if v.Head().Kind == plan.Source {
		return true
	}
	return v.InputChannels() == 1 || logged
}
