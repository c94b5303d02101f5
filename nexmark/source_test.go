package nexmark

import (
	"context"
	"testing"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connector/connectortest"
)

// Each subtask's events come in timestamp order, so event time needs no
// allowance for disorder.
func TestSourceSubtasksAreInTimestampOrder(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NumEvents = 20000
	src, err := Source(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for s := range 3 {
		r, err := src.Open(context.Background(), connector.SubtaskInfo{Subtask: s, Parallelism: 3}, nil)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]Event, 100)
		last := int64(0)
		for {
			n, err := r.Read(context.Background(), buf)
			if err != nil {
				break
			}
			for i := range n {
				if ts := buf[i].DateTime(); ts < last {
					t.Fatalf("subtask %d: event time %d after %d", s, ts, last)
				} else {
					last = ts
				}
			}
		}
	}
}

func TestSourceConformsAndMatchesTheGenerator(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NumEvents = 3000
	cfg.NumEventGenerators = 6
	src, err := Source(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The whole stream: the generators of Beam's split, in full.
	g, _ := NewGenerator(cfg)
	var want []Event
	for _, sg := range g.Split(6) {
		for i := range sg.MaxEvents() {
			var e Event
			sg.EventAt(i, &e)
			want = append(want, e)
		}
	}
	if len(want) != 3000 {
		t.Fatalf("split produced %d events, want 3000", len(want))
	}
	connectortest.TestSource(t, connectortest.SourceCase[Event]{
		New:  func(*testing.T) connector.Source[Event] { return src },
		Want: want,
	})
}
