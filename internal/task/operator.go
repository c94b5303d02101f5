// Package task runs a physical plan: one goroutine per subtask of every
// vertex, each driving a chain of operators, connected by exchange gates.
//
// Operators are typed (package weir builds them from user functions); this
// package sees them through small interfaces. Records flow through a chain
// as direct calls of Collector.Collect; control events (watermarks, end of
// input, checkpoints) are delivered by the task to every operator of the
// chain in order.
package task

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weir-stream/weir/connector"
)

// Collector receives records with their event timestamps. Collect is called
// from the task goroutine only. It reports errors by calling Fail.
type Collector[T any] interface {
	Collect(ts int64, v T)
}

// Operator is the control side of an operator in a chain. The task calls
// Open before any record, then Collect on the operator's inputs interleaved
// with Watermark, then EndInput once when all inputs have ended (bounded
// input; not on cancellation or failure), then Close exactly once.
type Operator interface {
	Open(ctx *Context) error
	// Watermark tells the operator that its input's event time has reached
	// wm. The operator fires its due event-time timers, emitting records
	// downstream, and returns the watermark to forward (normally wm).
	Watermark(wm int64) int64
	// EndInput is called after the final watermark once all inputs ended.
	EndInput() error
	// Close releases resources. It is called after failures too.
	Close() error
}

// Flusher is implemented by operators that buffer output (sinks). The task
// calls Flush when its inputs are momentarily empty, so buffered records do
// not wait for more input.
type Flusher interface {
	Flush() error
}

// ProcessingTimer is implemented by operators with processing-time timers.
// After each step the task asks NextProcessingTime for the earliest pending
// timer (ok false: none) and calls FireProcessingTime(now) when it is due.
type ProcessingTimer interface {
	NextProcessingTime() (t int64, ok bool)
	FireProcessingTime(now int64)
}

// WatermarkAssigner is implemented by an operator that generates the
// watermark of its output from the records it sees, instead of
// forwarding its input's: a timestamp assigner within a pipeline. It is
// a ProcessingTimer, whose timer marks when its watermark may have
// risen. After the timer fired the task advances the chain again from
// its current input watermark: the operators before the assigner see
// that watermark again (which must change nothing), the assigner's
// Watermark returns the one it generated, and the operators after it
// and the task's consumers get that.
type WatermarkAssigner interface {
	ProcessingTimer
	AssignsWatermarks()
}

// IdleAssigner is a WatermarkAssigner that also decides whether its
// subtask is idle, as Flink's WatermarkStrategy.withIdleness does: Idle
// reports that it has seen no record for a while. The task asks after
// every step and after its processing-time timers fired, and tells its
// consumers when the answer changes: idle, so that they no longer wait
// for its watermark, or active again (a watermark) once records come.
// Of a chain's assigners the last decides; the idleness of the task's
// input, or of its source, is then ignored: the assigner, which sees no
// record while they are idle, goes idle itself.
type IdleAssigner interface {
	WatermarkAssigner
	Idle() bool
}

// Base implements Operator with no-ops; operators embed it.
type Base struct{}

func (Base) Open(*Context) error      { return nil }
func (Base) Watermark(wm int64) int64 { return wm }
func (Base) EndInput() error          { return nil }
func (Base) Close() error             { return nil }

// Context describes the subtask an operator runs in.
type Context struct {
	// Ctx is cancelled when the job stops; sources and sinks use it for I/O.
	Ctx context.Context
	// Job is the job's name.
	Job string
	// Operator is the operator's name; Subtask and Parallelism its instance.
	Operator    string
	Subtask     int
	Parallelism int
	// Attempt counts the job's restarts (0 for the first run).
	Attempt int
	// Restored is the checkpoint the subtask restored (0: none).
	Restored int64
	// TrackLatency asks sinks to record event-time latency.
	TrackLatency bool
	// MaxParallelism is the number of key groups; this subtask owns key
	// groups [KeyGroupStart, KeyGroupEnd).
	MaxParallelism             int
	KeyGroupStart, KeyGroupEnd int
	// Now returns the processing time in epoch milliseconds.
	Now func() int64
	// WatermarkInterval is how often sources, and operators that
	// generate watermarks (WatermarkAssigner), emit them.
	WatermarkInterval time.Duration
	// Metrics counts what the subtask does.
	Metrics *Metrics
	// Ordered asks operators whose node is Deterministic to emit in an
	// order that depends on their input and state alone, not on map
	// iteration (fine-grained failover and active standby compare
	// regenerated output record for record). It may cost them a sort.
	Ordered bool
	// UID is the operator's uid (plan.Node.UID), its identity across
	// versions of the job.
	UID string
	// State, when not nil, keeps keyed state in LSM stores (the pebble
	// state backend); nil keeps it in memory.
	State *LSMState
	// Memory is what incremental checkpoints of memory state need
	// (state.Incremental); nil without them.
	Memory *MemoryState
	// Gap is the operator's mark under at-most-once recovery, which
	// restarts it with empty state (see GapMark); nil under the other
	// guarantees.
	Gap *GapMark
	// Wake asks the task to call Complete of its chain's Completers
	// soon; any goroutine may call it (see Completer). Nil in contexts
	// not built by a subtask.
	Wake func()
}

// failure carries an error out of a Collect call chain by panic; the task
// recovers it.
type failure struct{ err error }

// Permanent marks err as a failure no restart can cure, such as a sink
// that cannot give the job's guarantee: the engine fails the job at once
// instead of restarting tasks into the same error.
func Permanent(err error) error { return &permanentError{err} }

// IsPermanent reports whether err, or an error it wraps, was marked with
// Permanent, or is a connector's configuration error or malformed record
// (connector.ErrConfig, connector.ErrMalformed), which a restart meets
// again.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p) || errors.Is(err, connector.ErrConfig) || errors.Is(err, connector.ErrMalformed)
}

type permanentError struct{ err error }

func (p *permanentError) Error() string { return p.err.Error() }
func (p *permanentError) Unwrap() error { return p.err }

// Fail aborts the current task with err. Operators call it from Collect,
// which returns no error; the task recovers it and fails the job with err.
func Fail(err error) {
	panic(failure{err})
}

// Failf is Fail with a formatted error.
func Failf(format string, args ...any) {
	Fail(fmt.Errorf(format, args...))
}

// ErrKeyGroupNotOwned is the cause of a failure of a subtask that was
// handed a record of a key group it does not own (a KeyGroupError): a
// broken invariant, since records are routed by key group. The runtime
// does not restart such a subtask alone, where the same input could
// reach it again from a sender's retained output; under fine-grained
// failover the attempt fails, and the job rolls back globally.
var ErrKeyGroupNotOwned = errors.New("a record reached a subtask that does not own its key group")

// KeyGroupError says that a record of key group KeyGroup reached the
// subtask owning key groups [Start, End). Keyed operators fail with it
// (Fail) before they touch their state; the runtime adds the channel the
// record came on.
type KeyGroupError struct {
	KeyGroup, Start, End int
}

func (e *KeyGroupError) Error() string {
	return fmt.Sprintf("a record of key group %d reached the subtask that owns key groups [%d, %d)", e.KeyGroup, e.Start, e.End)
}

func (e *KeyGroupError) Unwrap() error { return ErrKeyGroupNotOwned }

// KeyGroupRange returns the key groups [start, end) that subtask i of n
// owns when there are maxPar key groups: contiguous ranges as even as
// possible, the same in every process.
func KeyGroupRange(maxPar, n, i int) (start, end int) {
	start = (i*maxPar + n - 1) / n
	end = ((i+1)*maxPar + n - 1) / n
	return start, end
}

// SubtaskForKeyGroup returns the subtask of n that owns key group kg; it is
// the inverse of KeyGroupRange.
func SubtaskForKeyGroup(maxPar, n, kg int) int {
	return kg * n / maxPar
}
