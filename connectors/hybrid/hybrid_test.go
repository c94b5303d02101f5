package hybrid

import (
	"context"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connector/connectortest"
	"github.com/weir-stream/weir/connectors/collection"
)

// fromEnd is a stage of the values after the ended stage's last
// collection index, so that what it yields depends on the End.
func fromEnd(ctx context.Context, end End) (connector.Source[int], error) {
	if end.Position == nil {
		return nil, errors.New("no end position")
	}
	return collection.Of(100, 101, 102, 103, 104), nil
}

func TestHybridConformance(t *testing.T) {
	connectortest.TestSource(t, connectortest.SourceCase[int]{
		New: func(t *testing.T) connector.Source[int] {
			return New(collection.Of(1, 2, 3, 4, 5, 6, 7), Then(collection.Of[int]()), fromEnd, Then(collection.Of(200, 201)))
		},
		Want:         []int{1, 2, 3, 4, 5, 6, 7, 100, 101, 102, 103, 104, 200, 201},
		Parallelism:  []int{1, 2, 3},
		BadPositions: []connector.Position{{9}, {1}, encodePosition(position{stage: 4}), append(encodePosition(start), 0)},
	})
}

// readAll reads r to its end, recording its progress after each Read.
func readAll(t *testing.T, r connector.Reader[int64]) (got, progress []int64) {
	t.Helper()
	buf := make([]int64, 2)
	for {
		n, err := r.Read(t.Context(), buf)
		if err == io.EOF {
			return got, progress
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
		progress = append(progress, r.(connector.EventTimer[int64]).EventTimeProgress())
	}
}

// The event time goes on across a switch: the next stage is built from
// the progress where the previous one ended, and the progress neither
// falls back to the next stage's older records nor jumps to the end.
func TestEventTimeGoesOnAcrossTheSwitch(t *testing.T) {
	var ends []End
	src := New(collection.Of[int64](1000, 3000, 2000),
		func(_ context.Context, end End) (connector.Source[int64], error) {
			ends = append(ends, end)
			return collection.Of(end.EventTime-500, end.EventTime+2000), nil
		})
	r, err := src.Open(t.Context(), connector.SubtaskInfo{Operator: "h", Parallelism: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	et := r.(connector.EventTimer[int64])
	et.SetEventTime(func(v int64) int64 { return v })
	if p := et.EventTimeProgress(); p != math.MinInt64 {
		t.Errorf("progress before reading %d, want unknown", p)
	}
	got, progress := readAll(t, r)
	if want := []int64{1000, 3000, 2000, 2500, 5000}; !slices.Equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
	if want := []int64{3000, 3000, 3000, 5000}; !slices.Equal(progress, want) {
		t.Errorf("progress after each read %v, want %v", progress, want)
	}
	if len(ends) != 1 || ends[0].Stage != 0 || ends[0].EventTime != 3000 || ends[0].Position == nil {
		t.Errorf("stage 1 built from %+v, want one End of stage 0 at event time 3000", ends)
	}
}

// A subtask restored into a later stage rebuilds it from the End it was
// built from and keeps the progress where the earlier stages ended.
func TestRestoreResumesTheActiveStageFromItsEnd(t *testing.T) {
	var built []End
	src := New(collection.Of[int64](1000, 3000),
		func(_ context.Context, end End) (connector.Source[int64], error) {
			built = append(built, end)
			return collection.Of[int64](4000, 5000, 6000), nil
		})
	info := connector.SubtaskInfo{Operator: "h", Parallelism: 1}
	r, err := src.Open(t.Context(), info, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.(connector.EventTimer[int64]).SetEventTime(func(v int64) int64 { return v })
	buf := make([]int64, 1)
	var got []int64
	for len(got) < 3 { // 1000, 3000, the switch, 4000
		n, err := r.Read(t.Context(), buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
	}
	pos := r.Position()
	r.Close()

	r, err = src.Open(t.Context(), info, pos)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	et := r.(connector.EventTimer[int64])
	et.SetEventTime(func(v int64) int64 { return v })
	if p := et.EventTimeProgress(); p != 3000 {
		t.Errorf("restored progress %d, want 3000, where stage 0 ended", p)
	}
	rest, _ := readAll(t, r)
	if want := []int64{5000, 6000}; !slices.Equal(rest, want) {
		t.Errorf("restored read %v, want %v", rest, want)
	}
	if len(built) != 2 || built[0].EventTime != built[1].EventTime || !slices.Equal(built[0].Position, built[1].Position) {
		t.Errorf("stage 1 built from %+v; want the same End twice", built)
	}
}

func TestAStageThatFailsToBuildFailsTheRead(t *testing.T) {
	boom := errors.New("boom")
	src := New(collection.Of(1), func(context.Context, End) (connector.Source[int], error) { return nil, boom })
	r, err := src.Open(t.Context(), connector.SubtaskInfo{Operator: "h", Parallelism: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]int, 4)
	for err == nil {
		_, err = r.Read(t.Context(), buf)
	}
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "building stage 1") {
		t.Errorf("got %v, want the stage's error, naming the stage", err)
	}
}
