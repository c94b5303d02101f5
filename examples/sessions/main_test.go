package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/connectors/file"
)

// oneByOne hands out one record per Read, so that with a watermark
// interval of a nanosecond the source emits a watermark after every
// record: which clicks are late then depends on the input alone.
type oneByOne[T any] struct{ connector.Source[T] }

func (s oneByOne[T]) Open(ctx context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[T], error) {
	r, err := s.Source.Open(ctx, info, pos)
	return oneReader[T]{r}, err
}

type oneReader[T any] struct{ connector.Reader[T] }

func (r oneReader[T]) Read(ctx context.Context, buf []T) (int, error) {
	return r.Reader.Read(ctx, buf[:1])
}

const minute = int64(time.Minute / time.Millisecond)

// The clicks of testdata/clicks.jsonl, minute by minute: ann's first
// session [0, 50) fires when ann's click at 55 moves the watermark to 54;
// ann's click at 15 is late but within the allowed lateness, so the
// session fires again with 4 clicks; ann's click at 5, after the
// watermark reached 79, is later than the session's end plus lateness
// (35 + 10) and goes to the side output.
func TestSessionsWithLateData(t *testing.T) {
	p := weir.NewPipeline(weir.WithParallelism(2), weir.WithWatermarkInterval(time.Nanosecond))
	sessions, late := collection.NewSink[Session](), collection.NewSink[Click]()
	build(p, oneByOne[Click]{file.JSONLines[Click](file.Options{}, "testdata/clicks.jsonl")}, sessions, late)
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range sessions.Records() {
		got = append(got, fmt.Sprintf("%s [%d,%d) %d", s.User, s.Start/minute, s.End/minute, s.Clicks))
	}
	slices.Sort(got)
	want := []string{"ann [0,50) 3", "ann [0,50) 4", "ann [55,110) 2", "bob [5,35) 1"}
	if !slices.Equal(got, want) {
		t.Errorf("sessions: got %q, want %q", got, want)
	}
	if got, want := late.Records(), []Click{{"ann", 5 * minute}}; !slices.Equal(got, want) {
		t.Errorf("late clicks: got %v, want %v", got, want)
	}
}

// The command prints sessions as JSON lines on one writer and late
// clicks on the other.
func TestRunPrintsJSONLines(t *testing.T) {
	var sessions, late bytes.Buffer
	if err := run(context.Background(), "testdata/clicks.jsonl", &sessions, &late); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(sessions.String()), "\n") {
		var s Session
		if err := json.Unmarshal([]byte(line), &s); err != nil || s.User == "" || s.Clicks < 1 {
			t.Errorf("session line %q: %+v, %v", line, s, err)
		}
		n++
	}
	// How many clicks are late depends on when watermarks are emitted,
	// but every session has at least one result.
	if n < 3 {
		t.Errorf("%d session results, want at least 3:\n%s", n, sessions.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(late.String()), "\n") {
		if line == "" {
			continue
		}
		var c Click
		if err := json.Unmarshal([]byte(line), &c); err != nil || c.User == "" {
			t.Errorf("late line %q: %v", line, err)
		}
	}
}
