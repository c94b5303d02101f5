package weir

import (
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/state"
)

// StateOption configures a state handle when NewValueState, NewListState,
// NewMapState, NewReducingState or NewAggregatingState creates it.
type StateOption func(*stateConfig)

type stateConfig struct {
	hasTTL  bool
	ttl     time.Duration
	updates []TTLUpdateType
}

// TTLUpdateType says which accesses of a state entry restart its
// time-to-live, as Flink's StateTtlConfig.UpdateType does.
type TTLUpdateType int

const (
	// TTLOnCreateAndWrite restarts an entry's time-to-live when it is
	// created or written (Update, Add, Put): the default.
	TTLOnCreateAndWrite TTLUpdateType = iota
	// TTLOnReadAndWrite restarts it when it is read too (Value, Get,
	// All, Len).
	TTLOnReadAndWrite
)

// StateTTL gives a state a time-to-live, as Flink's StateTtlConfig does:
// an entry expires ttl of processing time (the operator's clock,
// KeyedContext.ProcessingTime) after it was last written, or, with
// TTLOnReadAndWrite, last read or written; the optional update type is
// TTLOnCreateAndWrite when not given. An expired entry is never returned
// (Flink's NeverReturnExpired): Value, Get, All and Len see nothing of it.
//
// Entries expire one by one: the value of a key in ValueState,
// ReducingState and AggregatingState, each element of a ListState's
// list, each entry (user key) of a MapState's map. An expired entry is
// removed when it is read, and in the background of the state's
// accesses, which sweep the state one key group at a time, so that the
// entries of keys never seen again are removed too.
//
// The stored entries of a state with a time-to-live hold their access
// times, so a restore cannot add a time-to-live to a state checkpointed
// without one, nor remove it: the job fails to start, naming the state
// (rename the state to start it empty). The time-to-live itself may
// change across a restore, and then applies to every entry. A function
// that says it is deterministic (DeterministicFunction) cannot have state
// with a time-to-live: its expiry depends on the clock.
func StateTTL(ttl time.Duration, update ...TTLUpdateType) StateOption {
	return func(c *stateConfig) { c.hasTTL, c.ttl, c.updates = true, ttl, update }
}

// ttlOf returns the time-to-live the options give state name, if any,
// recording an invalid one in sc.
func ttlOf[K comparable](sc *StateContext[K], name string, opts []StateOption) (state.TTL, bool) {
	var c stateConfig
	for _, o := range opts {
		o(&c)
	}
	if !c.hasTTL {
		return state.TTL{}, false
	}
	var err error
	switch {
	case c.ttl < time.Millisecond:
		err = fmt.Errorf("state %q: a time-to-live must be at least a millisecond, got %v", name, c.ttl)
	case len(c.updates) > 1:
		err = fmt.Errorf("state %q: StateTTL takes at most one update type, got %d", name, len(c.updates))
	case len(c.updates) == 1 && c.updates[0] != TTLOnCreateAndWrite && c.updates[0] != TTLOnReadAndWrite:
		err = fmt.Errorf("state %q: unknown time-to-live update type %d", name, c.updates[0])
	case sc.deterministic:
		err = fmt.Errorf("state %q has a time-to-live, which reads the processing-time clock, but the function says it is deterministic", name)
	}
	if err != nil {
		sc.setErr(err)
		return state.TTL{}, false
	}
	ms := (c.ttl + time.Millisecond - 1) / time.Millisecond
	return sc.core.TTL(int64(ms), len(c.updates) == 1 && c.updates[0] == TTLOnReadAndWrite), true
}
