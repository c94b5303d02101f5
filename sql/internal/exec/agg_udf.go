package exec

import (
	"fmt"
	"strings"
	"sync"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// AggregateFunction is a user-defined aggregate function of one
// argument, registered from Go with RegisterAggregate and called from
// SQL by its name like a built-in aggregate.
//
// The planner calls ResultType when it binds a call; the operators call
// NewAccumulator for every group (or window) they start, and keep the
// accumulator in keyed state through its own encoding, so an
// accumulator is a value, not a handle to anything outside it.
type AggregateFunction interface {
	// ResultType returns the type of the aggregate over an argument of
	// type in (a NULL type for a call without argument), or an error
	// saying why it does not take in.
	ResultType(in types.Type) (types.Type, error)
	// NewAccumulator returns the accumulator of no rows.
	NewAccumulator() Accumulator
}

// Accumulator is the running state of a user-defined aggregate for one
// group. The engine calls Accumulate for every row of the group that
// passes the call's FILTER, with the argument's value, NULL included
// (a function skips NULL itself, as SQL's aggregates do); with DISTINCT,
// once per distinct value. Merge folds the rows of another accumulator
// of the same function into this one (sessions merging). Result is the
// aggregate's value now; it must not change the accumulator.
//
// Between calls the engine may encode the accumulator (AppendBinary)
// and later decode it into a fresh one from NewAccumulator
// (DecodeBinary), as codec.Marshaler and codec.Unmarshaler say; an
// accumulator must survive that trip whole.
//
// An accumulator that also implements Retractor can take back rows, so
// the function may aggregate an updating input; without it the planner
// must not use the function over one (GroupAggregate refuses it).
type Accumulator interface {
	Accumulate(v row.Value)
	Merge(other Accumulator)
	Result() row.Value
	codec.Marshaler
	codec.Unmarshaler
}

// Retractor is the optional ability of an Accumulator to take back a
// value Accumulate was given before (a -U or -D row of the input).
type Retractor interface {
	Retract(v row.Value)
}

var udfs struct {
	sync.RWMutex
	m map[string]AggregateFunction
}

// RegisterAggregate makes f callable as name (case-insensitive). It
// fails for a built-in aggregate's name and for a name registered
// already. Register at init time, before any planning.
func RegisterAggregate(name string, f AggregateFunction) error {
	n := strings.ToUpper(name)
	if _, ok := builtins[n]; ok {
		return fmt.Errorf("exec: aggregate %s is built in", n)
	}
	udfs.Lock()
	defer udfs.Unlock()
	if _, ok := udfs.m[n]; ok {
		return fmt.Errorf("exec: aggregate %s is registered already", n)
	}
	if udfs.m == nil {
		udfs.m = map[string]AggregateFunction{}
	}
	udfs.m[n] = f
	return nil
}

// LookupAggregate returns the user-defined aggregate registered as name
// (case-insensitive).
func LookupAggregate(name string) (AggregateFunction, bool) {
	udfs.RLock()
	defer udfs.RUnlock()
	f, ok := udfs.m[strings.ToUpper(name)]
	return f, ok
}

// IsAggregate reports whether name is an aggregate function, built in
// or registered: what the planner asks of a call in a SELECT list.
func IsAggregate(name string) bool {
	if _, ok := builtins[strings.ToUpper(name)]; ok {
		return true
	}
	_, ok := LookupAggregate(name)
	return ok
}
