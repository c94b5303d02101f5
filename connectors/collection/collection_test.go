package collection

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connector/connectortest"
)

type point struct{ X, Y int }

func points(n int) []point {
	out := make([]point, n)
	for i := range out {
		out[i] = point{i, i % 3} // duplicates in Y, distinct overall
	}
	return out
}

func TestSourceConformance(t *testing.T) {
	for _, n := range []int{0, 1, 10, 101} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			want := points(n)
			connectortest.TestSource(t, connectortest.SourceCase[point]{
				New:          func(*testing.T) connector.Source[point] { return Of(want...) },
				Want:         want,
				Parallelism:  []int{1, 2, 3, 4},
				BadPositions: []connector.Position{{0x80}, {0x01, 0x02}, binary.AppendUvarint(nil, 1<<40)},
			})
		})
	}
	t.Run("duplicates", func(t *testing.T) {
		want := []string{"a", "b", "a", "a", "c"}
		connectortest.TestSource(t, connectortest.SourceCase[string]{
			New:  func(*testing.T) connector.Source[string] { return Of(want...) },
			Want: want,
		})
	})
}

func TestSinkConformance(t *testing.T) {
	connectortest.TestSink(t, connectortest.SinkCase[point]{
		New:               func(*testing.T) connector.Sink[point] { return NewSink[point]() },
		ReadBack:          func(_ *testing.T, s connector.Sink[point]) []point { return s.(*Sink[point]).Records() },
		ReadBackBySubtask: func(_ *testing.T, s connector.Sink[point]) [][]point { return s.(*Sink[point]).BySubtask() },
		Records:           points(300),
		Parallelism:       []int{1, 2, 3, 7},
	})
}

func TestOfCopies(t *testing.T) {
	items := []int{1, 2, 3}
	src := Of(items...)
	items[0] = 99
	got, err := connectortest.ReadAll(t.Context(), src, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d := connectortest.DiffSequence(got[0], []int{1, 2, 3}); d != "" {
		t.Error(d)
	}
}

func TestPositionErrors(t *testing.T) {
	src := Of(1, 2, 3, 4)
	_, err := src.Open(t.Context(), connector.SubtaskInfo{Subtask: 0, Parallelism: 2}, binary.AppendUvarint(nil, 1))
	if want := "collection: position index 1 does not belong to subtask 0 of 2"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestSinkBySubtask(t *testing.T) {
	ctx := context.Background()
	s := NewSink[string]()
	w1, _ := s.Open(ctx, connector.SubtaskInfo{Subtask: 1, Parallelism: 3})
	w1.Write(ctx, []string{"x", "y"})
	w0, _ := s.Open(ctx, connector.SubtaskInfo{Subtask: 0, Parallelism: 3})
	w0.Write(ctx, []string{"a"})
	if got := fmt.Sprint(s.BySubtask()); got != "[[a] [x y] []]" {
		t.Errorf("BySubtask = %s", got)
	}
	if got := fmt.Sprint(s.Records()); got != "[a x y]" {
		t.Errorf("Records = %s", got)
	}
	s.Reset()
	if got := s.Records(); len(got) != 0 {
		t.Errorf("after Reset: %v", got)
	}
	w1.Write(ctx, []string{"z"}) // an open writer survives Reset
	if got := fmt.Sprint(s.BySubtask()); got != "[[] [z]]" {
		t.Errorf("after Reset and Write: %s", got)
	}
}
