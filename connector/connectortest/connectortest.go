// Package connectortest is a conformance suite for weir connectors, in the
// spirit of testing/fstest.TestFS.
//
// A connector's tests call TestSource with a bounded instance of its source
// and the records it must yield, and TestSink with its sink and a way to read
// back what the sink wrote:
//
//	func TestConformance(t *testing.T) {
//		connectortest.TestSource(t, connectortest.SourceCase[string]{
//			New:  func(t *testing.T) connector.Source[string] { return mysource.New(...) },
//			Want: []string{"a", "b", "c"},
//		})
//	}
//
// The suite checks the contracts documented in package connector: that the
// subtasks of a source together yield every record exactly once, that the
// split is deterministic, that a Reader reopened at its Position resumes
// exactly where it left off (with any buffer size, at the start, in the
// middle and at io.EOF), and that a sink writes every record it is given,
// keeps each subtask's order when that can be observed, and does not retain
// the batches it is handed. Sources are read and sinks written with all
// subtasks running concurrently, so run the suite with -race.
//
// Every check is also available as a function returning an error (CheckSplit,
// CheckRewind, CheckSink, ...), for use outside package testing or to check
// that a broken connector is caught. Error messages say which subtask, which
// position and which record differ.
package connectortest

import (
	"fmt"
	"testing"

	"github.com/weir-stream/weir/connector"
)

// SourceCase describes a bounded source under test.
type SourceCase[T comparable] struct {
	// New returns the source under test. It is called once per subtest; the
	// source it returns is opened many times.
	New func(t *testing.T) connector.Source[T]
	// Want is the whole input, as a multiset: every record the subtasks of
	// the source together must yield, each as often as it occurs in Want.
	Want []T
	// Parallelism lists the numbers of subtasks to check; nil means 1, 2, 3.
	Parallelism []int
	// Seed seeds the choice of rewind points.
	Seed uint64
	// BadPositions optionally lists corrupt positions; opening subtask 0 of 1
	// at each must fail with an error.
	BadPositions []connector.Position
}

// SinkCase describes a sink under test.
type SinkCase[T comparable] struct {
	// New returns a fresh, empty sink. It is called once per subtest.
	New func(t *testing.T) connector.Sink[T]
	// ReadBack returns every record the given sink (returned by New) made
	// visible, in any order. It is called after all writers are closed.
	ReadBack func(t *testing.T, sink connector.Sink[T]) []T
	// ReadBackBySubtask optionally returns the records the sink made
	// visible per subtask, each in the order written. If set, the suite
	// checks per-subtask order too.
	ReadBackBySubtask func(t *testing.T, sink connector.Sink[T]) [][]T
	// Records are the records to write; the suite spreads them over the
	// subtasks with Split.
	Records []T
	// Parallelism lists the numbers of subtasks to check; nil means 1, 2, 3.
	Parallelism []int
}

func parallelisms(p []int) []int {
	if len(p) == 0 {
		return []int{1, 2, 3}
	}
	return p
}

// TestSource runs the source conformance checks (CheckSplit, CheckRewind and,
// if c.BadPositions is set, CheckBadPositions) as subtests of t.
func TestSource[T comparable](t *testing.T, c SourceCase[T]) {
	t.Helper()
	if c.New == nil {
		t.Fatal("connectortest: SourceCase.New is nil")
	}
	for _, n := range parallelisms(c.Parallelism) {
		t.Run(fmt.Sprintf("split/n=%d", n), func(t *testing.T) {
			if err := CheckSplit(t.Context(), c.New(t), c.Want, n); err != nil {
				t.Error(err)
			}
		})
		t.Run(fmt.Sprintf("rewind/n=%d", n), func(t *testing.T) {
			if err := CheckRewind(t.Context(), c.New(t), c.Want, n, c.Seed); err != nil {
				t.Error(err)
			}
		})
	}
	if len(c.BadPositions) > 0 {
		t.Run("bad-positions", func(t *testing.T) {
			if err := CheckBadPositions(t.Context(), c.New(t), c.BadPositions); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestSink runs the sink conformance checks (CheckSink and CheckSinkEmpty) as
// subtests of t.
func TestSink[T comparable](t *testing.T, c SinkCase[T]) {
	t.Helper()
	if c.New == nil || (c.ReadBack == nil && c.ReadBackBySubtask == nil) {
		t.Fatal("connectortest: SinkCase needs New and ReadBack or ReadBackBySubtask")
	}
	readBack := func(t *testing.T, sink connector.Sink[T]) func() ([]T, error) {
		if c.ReadBack != nil {
			return func() ([]T, error) { return c.ReadBack(t, sink), nil }
		}
		return func() ([]T, error) {
			var all []T
			for _, seq := range c.ReadBackBySubtask(t, sink) {
				all = append(all, seq...)
			}
			return all, nil
		}
	}
	for _, n := range parallelisms(c.Parallelism) {
		t.Run(fmt.Sprintf("write/n=%d", n), func(t *testing.T) {
			sink := c.New(t)
			var bySubtask func() ([][]T, error)
			if c.ReadBackBySubtask != nil {
				bySubtask = func() ([][]T, error) { return c.ReadBackBySubtask(t, sink), nil }
			}
			if err := CheckSink(t.Context(), sink, c.Records, n, readBack(t, sink), bySubtask); err != nil {
				t.Error(err)
			}
		})
		t.Run(fmt.Sprintf("empty/n=%d", n), func(t *testing.T) {
			sink := c.New(t)
			if err := CheckSinkEmpty(t.Context(), sink, n, readBack(t, sink)); err != nil {
				t.Error(err)
			}
		})
	}
}
