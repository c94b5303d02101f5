package blob

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// ErrInjected is the error a FaultyStore returns for a Fail action given
// no error of its own.
var ErrInjected = errors.New("blob: injected fault")

// Op names a Store operation, for matching faults to calls.
type Op int

// The operations of Store and Stater.
const (
	OpPut Op = iota
	OpPutIfAbsent
	OpGet
	OpList
	OpDelete
	OpStat
)

func (o Op) String() string {
	switch o {
	case OpPut:
		return "put"
	case OpPutIfAbsent:
		return "put-if-absent"
	case OpGet:
		return "get"
	case OpList:
		return "list"
	case OpDelete:
		return "delete"
	case OpStat:
		return "stat"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// Plan is the list of faults a FaultyStore injects. Each call is matched
// against the rules in order; the first rule whose turn it is acts, and
// the call proceeds normally if none does.
type Plan []Rule

// Rule injects Action into calls of Op on keys starting with Prefix.
//
// Each rule counts the calls it matches, from 1. With Nth > 0 it acts on
// the Nth matching call only; with Nth == 0 on every matching call. The
// count is deterministic for a sequential caller; with concurrent callers
// which call is the Nth depends on scheduling.
type Rule struct {
	Op     Op
	Prefix string // for OpList, matched against the listed prefix
	Nth    int
	Action Action
}

// Action is what a Rule does to a call. Build one with Fail, Truncate,
// Corrupt or Torn.
type Action struct {
	kind actionKind
	n    int
	err  error
}

type actionKind int

const (
	actFail actionKind = iota
	actTruncate
	actCorrupt
	actTorn
)

// Fail returns err (ErrInjected if nil) without calling the wrapped store.
// It suits every operation.
func Fail(err error) Action {
	if err == nil {
		err = ErrInjected
	}
	return Action{kind: actFail, err: err}
}

// Truncate keeps only the first n bytes of the data written by Put or
// PutIfAbsent, or returned by Get, and reports success: a store that
// silently lost the end of a blob. On other operations it does nothing.
func Truncate(n int) Action { return Action{kind: actTruncate, n: n} }

// Corrupt inverts the bits of the byte at offset (modulo the length) of
// the data written by Put or PutIfAbsent, or returned by Get, and reports
// success: bit rot. Empty data is left alone. On other operations it does
// nothing.
func Corrupt(offset int) Action { return Action{kind: actCorrupt, n: offset} }

// Torn writes only the first n bytes with Put or PutIfAbsent and then
// returns ErrInjected: a writer that crashed mid-write on a store that is
// not atomic. On other operations it acts like Fail(nil).
func Torn(n int) Action { return Action{kind: actTorn, n: n} }

// FaultyStore wraps a Store and injects the faults of its Plan. It is for
// tests. It implements Stater whether or not the wrapped store does.
type FaultyStore struct {
	s    Store
	plan Plan

	mu       sync.Mutex
	calls    []int // per rule: matching calls so far
	injected int
}

// Faulty returns s wrapped to inject the faults plan describes. A nil
// plan injects nothing.
func Faulty(s Store, plan Plan) *FaultyStore {
	return &FaultyStore{s: s, plan: slices.Clone(plan), calls: make([]int, len(plan))}
}

// Injected returns how many calls a rule has acted on so far, so a test
// can check that the fault it planned happened.
func (f *FaultyStore) Injected() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected
}

// action returns the action for this call, if any rule acts on it.
func (f *FaultyStore) action(op Op, key string) (Action, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var (
		act   Action
		found bool
	)
	for i, r := range f.plan {
		if r.Op != op || !strings.HasPrefix(key, r.Prefix) {
			continue
		}
		f.calls[i]++ // every matching rule counts the call
		if !found && (r.Nth == 0 || r.Nth == f.calls[i]) {
			act, found = r.Action, true
		}
	}
	if found {
		f.injected++
	}
	return act, found
}

// mangle applies a Truncate or Corrupt action to a copy of data.
func (a Action) mangle(data []byte) []byte {
	switch a.kind {
	case actTruncate, actTorn:
		return slices.Clone(data[:min(max(a.n, 0), len(data))])
	case actCorrupt:
		if len(data) == 0 {
			return data
		}
		data = slices.Clone(data)
		data[a.n%len(data)] ^= 0xff
	}
	return data
}

// write is Put and PutIfAbsent with faults.
func (f *FaultyStore) write(ctx context.Context, op Op, key string, data []byte,
	put func(context.Context, string, []byte) error) error {
	act, ok := f.action(op, key)
	if !ok {
		return put(ctx, key, data)
	}
	switch act.kind {
	case actFail:
		return opError(op.String(), key, act.err)
	case actTorn:
		if err := put(ctx, key, act.mangle(data)); err != nil {
			return err
		}
		return opError(op.String(), key, ErrInjected)
	}
	return put(ctx, key, act.mangle(data))
}

// Put implements Store.
func (f *FaultyStore) Put(ctx context.Context, key string, data []byte) error {
	return f.write(ctx, OpPut, key, data, f.s.Put)
}

// PutIfAbsent implements Store.
func (f *FaultyStore) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	return f.write(ctx, OpPutIfAbsent, key, data, f.s.PutIfAbsent)
}

// Get implements Store.
func (f *FaultyStore) Get(ctx context.Context, key string) ([]byte, error) {
	act, ok := f.action(OpGet, key)
	if ok && (act.kind == actFail || act.kind == actTorn) {
		return nil, opError("get", key, failErr(act))
	}
	data, err := f.s.Get(ctx, key)
	if err != nil || !ok {
		return data, err
	}
	return act.mangle(data), nil
}

// Stat implements Stater.
func (f *FaultyStore) Stat(ctx context.Context, key string) (Attrs, error) {
	if act, ok := f.action(OpStat, key); ok && (act.kind == actFail || act.kind == actTorn) {
		return Attrs{}, opError("stat", key, failErr(act))
	}
	return Stat(ctx, f.s, key)
}

// List implements Store.
func (f *FaultyStore) List(ctx context.Context, prefix string) ([]string, error) {
	if act, ok := f.action(OpList, prefix); ok && (act.kind == actFail || act.kind == actTorn) {
		return nil, opError("list", prefix, failErr(act))
	}
	return f.s.List(ctx, prefix)
}

// Delete implements Store.
func (f *FaultyStore) Delete(ctx context.Context, key string) error {
	if act, ok := f.action(OpDelete, key); ok && (act.kind == actFail || act.kind == actTorn) {
		return opError("delete", key, failErr(act))
	}
	return f.s.Delete(ctx, key)
}

func failErr(a Action) error {
	if a.err != nil {
		return a.err
	}
	return ErrInjected
}
