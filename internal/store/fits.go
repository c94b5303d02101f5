package store

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ErrIncompatible means a checkpoint cannot be restored into a run because
// its state is laid out for another key-group count, another pipeline or
// another job configuration. It is wrapped by a *MismatchError.
var ErrIncompatible = errors.New("checkpoint does not fit this run")

// Layout is what a checkpoint's state depends on beyond the state itself:
// a restore needs all of it unchanged but the parallelism, since keyed
// state is split by key group, stored per task and operator, and computed
// under the job's settings and guarantee.
type Layout struct {
	MaxParallelism int
	// Parallelism maps each vertex id to its number of subtasks.
	Parallelism map[int]int
	Operators   []Operator
	// Settings are the job's settings its results depend on, by name.
	Settings map[string]string
	// Guarantee is "exactly-once" or "at-least-once".
	Guarantee string
	// StateBackend is "" for the memory backend, or "pebble".
	StateBackend string
}

// Layout returns the layout m records.
func (m *Metadata) Layout() Layout {
	return Layout{MaxParallelism: m.MaxParallelism, Parallelism: m.Parallelism, Operators: m.Operators,
		Settings: m.Settings, Guarantee: m.Guarantee, StateBackend: m.StateBackend}
}

// SetLayout records l in m.
func (m *Metadata) SetLayout(l Layout) {
	m.MaxParallelism, m.Parallelism, m.Operators, m.Settings, m.Guarantee, m.StateBackend =
		l.MaxParallelism, l.Parallelism, l.Operators, l.Settings, l.Guarantee, l.StateBackend
}

// MismatchError lists why checkpoint ID cannot be restored into a run,
// one difference per entry, each saying what to change.
type MismatchError struct {
	ID          uint64
	Differences []string
}

func (e *MismatchError) Error() string { return strings.Join(e.Differences, "; ") }

// Is makes a MismatchError match ErrIncompatible.
func (e *MismatchError) Is(target error) bool { return target == ErrIncompatible }

// Fits returns nil if checkpoint m can be restored into a run laid out
// as run, and a *MismatchError naming every difference otherwise:
// another max parallelism (key groups would move), an operator uid that
// names an operator of another kind, another value of a recorded setting,
// an at-least-once checkpoint restored under exactly-once (its state
// may already reflect records twice), or a checkpoint of the pebble state
// backend restored by another (a savepoint of any backend fits any).
//
// Another parallelism of a task fits, and so do operators added, removed
// or chained differently: the state then moves by operator uid and key
// group when the engine reads it (internal/task/rescale.go). Whether
// every operator's state and every source's positions can move, and
// whether a removed operator held state, is decided when the state is
// read, since only the operators know.
//
// A checkpoint without a recorded max parallelism was written by a weir
// that recorded none of this; it is refused, since nothing of it can be
// checked.
func (m *Metadata) Fits(run Layout) error {
	e := &MismatchError{ID: m.ID}
	add := func(format string, args ...any) {
		e.Differences = append(e.Differences, fmt.Sprintf("checkpoint %d ", m.ID)+fmt.Sprintf(format, args...))
	}
	if m.MaxParallelism == 0 {
		add("was written by an older weir that did not record its max parallelism, operators and job settings, so this run cannot check that they match; restore it with the weir that wrote it, or start the job over without --restore")
		return e
	}
	if m.MaxParallelism != run.MaxParallelism {
		add("was taken with --max-parallelism %d, this run has %d: key groups would move; restore with --max-parallelism %d",
			m.MaxParallelism, run.MaxParallelism, m.MaxParallelism)
	}
	if d := operatorDifference(m.Operators, run.Operators); d != "" {
		add("was taken by a different pipeline: %s", d)
	}
	for _, name := range slices.Sorted(maps.Keys(union(m.Settings, run.Settings))) {
		was, wasSet := m.Settings[name]
		is, isSet := run.Settings[name]
		switch {
		case !wasSet:
			add("was taken without %s, this run has %s %s; restore without it", name, name, is)
		case !isSet:
			add("was taken with %s %s, this run has no %s; restore with %s %s", name, was, name, name, was)
		case was != is:
			add("was taken with %s %s, this run has %s; restore with %s %s", name, was, is, name, was)
		}
	}
	if m.Guarantee == "at-least-once" && run.Guarantee == "exactly-once" {
		add("was taken with --guarantee at-least-once, this run has exactly-once: its state may already reflect records twice, which an exactly-once run cannot undo; restore with --guarantee at-least-once")
	}
	if m.StateBackend != "" && m.StateBackend != run.StateBackend && !m.Savepoint() {
		add("was taken with --state-backend %s, whose checkpoints only that backend reads; restore with --state-backend %s, or restore a savepoint, which every backend reads", m.StateBackend, m.StateBackend)
	}
	if len(e.Differences) == 0 {
		return nil
	}
	return e
}

// operatorDifference describes how the operators of a checkpoint (was)
// conflict with a run's (is), or returns "" if they do not: an operator
// whose uid names an operator of another kind in the other. Operators
// added or removed, renamed under the same uid or chained differently do
// not conflict: the state moves by uid when it is read, and whether a
// removed operator held state is known only then.
func operatorDifference(was, is []Operator) string {
	was, is = WithUIDs(was), WithUIDs(is)
	byUID := map[string]Operator{}
	for _, o := range is {
		byUID[o.UID] = o
	}
	var diffs []string
	for _, o := range was {
		if n, ok := byUID[o.UID]; ok && n.Kind != o.Kind {
			diffs = append(diffs, fmt.Sprintf("its operator %q (uid %q) is a %s, this run's operator %q with that uid is a %s; give the new operator a uid of its own (weir.UID)",
				o.Name, o.UID, o.Kind, n.Name, n.Kind))
		}
	}
	return strings.Join(diffs, ", ")
}

func union(a, b map[string]string) map[string]string {
	u := maps.Clone(a)
	if u == nil {
		u = map[string]string{}
	}
	maps.Copy(u, b)
	return u
}
