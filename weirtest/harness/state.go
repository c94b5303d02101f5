package harness

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/operator/keyed"
	"github.com/weir-stream/weir/internal/state"
	"github.com/weir-stream/weir/internal/task"
)

// Stateful is a harness of a function with keyed state by name: Process
// and CoProcess. The functions below read and set that state for a key
// through the state handles of package weir, as the function itself
// would with that key current.
//
// Name a state the function registered in its Open, with the types it
// gave it, and the options (weir.StateTTL) it gave it: the harness
// refuses others, so that a test cannot add state a restore would not
// expect. A read through the harness is an access like the function's
// own: under StateTTL it sees no expired entry, and with
// weir.TTLOnReadAndWrite it restarts the entry's time-to-live.
type Stateful[K comparable] interface {
	functionState() *functionState[K]
}

// functionState reaches a function's state handles.
type functionState[K comparable] struct {
	h    func() error // the harness's usable
	core *keyed.Core[K]
	// open hands a state context of the function's operator to f.
	open func(f func(*weir.StateContext[K]) error) error
}

// with makes key the current key and runs use, the access of the state
// handle that handle creates for state name.
func (fs *functionState[K]) with(key K, name string, handle func(sc *weir.StateContext[K]) func()) error {
	if err := fs.h(); err != nil {
		return err
	}
	names := fs.core.Backend.Names()
	if !slices.Contains(names, name) && !slices.Contains(names, state.TTLName(name)) {
		return fmt.Errorf("harness: the function has no state %q (it has %s)", name, userStates(names))
	}
	var use func()
	if err := fs.open(func(sc *weir.StateContext[K]) error {
		use = handle(sc)
		return nil
	}); err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	return task.Catch(func() {
		fs.core.SetKey(key)
		use()
	})
}

// userStates lists the state names of a backend that are the function's,
// as it named them.
func userStates(names []string) string {
	var out []string
	for _, n := range names {
		if n == "timers-event" || n == "timers-processing" {
			continue
		}
		out = append(out, fmt.Sprintf("%q", strings.TrimSuffix(n, state.TTLName(""))))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// Value returns key's value of the function's weir.ValueState name,
// with V its value type, and whether it is set.
func Value[V any, K comparable](h Stateful[K], key K, name string, opts ...weir.StateOption) (v V, ok bool, err error) {
	err = h.functionState().with(key, name, func(sc *weir.StateContext[K]) func() {
		s := weir.NewValueState[V](sc, name, opts...)
		return func() { v, ok = s.Value() }
	})
	return v, ok, err
}

// SetValue sets key's value of the function's weir.ValueState name.
func SetValue[V any, K comparable](h Stateful[K], key K, name string, v V, opts ...weir.StateOption) error {
	return h.functionState().with(key, name, func(sc *weir.StateContext[K]) func() {
		s := weir.NewValueState[V](sc, name, opts...)
		return func() { s.Update(v) }
	})
}

// ClearValue clears key's value of the function's weir.ValueState name.
func ClearValue[V any, K comparable](h Stateful[K], key K, name string, opts ...weir.StateOption) error {
	return h.functionState().with(key, name, func(sc *weir.StateContext[K]) func() {
		s := weir.NewValueState[V](sc, name, opts...)
		return func() { s.Clear() }
	})
}

// List returns a copy of key's list of the function's weir.ListState
// name, with V its element type (nil when empty).
func List[V any, K comparable](h Stateful[K], key K, name string, opts ...weir.StateOption) (l []V, err error) {
	err = h.functionState().with(key, name, func(sc *weir.StateContext[K]) func() {
		s := weir.NewListState[V](sc, name, opts...)
		return func() { l = slices.Clone(s.Get()) }
	})
	return l, err
}

// SetList replaces key's list of the function's weir.ListState name
// with a copy of l; an empty l clears it.
func SetList[V any, K comparable](h Stateful[K], key K, name string, l []V, opts ...weir.StateOption) error {
	return h.functionState().with(key, name, func(sc *weir.StateContext[K]) func() {
		s := weir.NewListState[V](sc, name, opts...)
		return func() { s.Update(l) }
	})
}

// Map returns a copy of key's map of the function's weir.MapState name,
// with UK and UV its key and value types (empty, not nil, when the state
// holds nothing for key).
func Map[UK comparable, UV any, K comparable](h Stateful[K], key K, name string, opts ...weir.StateOption) (m map[UK]UV, err error) {
	m = map[UK]UV{}
	err = h.functionState().with(key, name, func(sc *weir.StateContext[K]) func() {
		s := weir.NewMapState[UK, UV](sc, name, opts...)
		return func() {
			s.All(func(uk UK, uv UV) bool {
				m[uk] = uv
				return true
			})
		}
	})
	return m, err
}

// SetMap replaces key's map of the function's weir.MapState name with
// the entries of m; an empty m clears it.
func SetMap[UK comparable, UV any, K comparable](h Stateful[K], key K, name string, m map[UK]UV, opts ...weir.StateOption) error {
	return h.functionState().with(key, name, func(sc *weir.StateContext[K]) func() {
		s := weir.NewMapState[UK, UV](sc, name, opts...)
		return func() {
			s.Clear()
			for uk, uv := range m {
				s.Put(uk, uv)
			}
		}
	})
}
