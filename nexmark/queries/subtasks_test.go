package queries

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/nexmark"
)

// heldSource is a source whose subtask held reads nothing until subtask
// first has read all of its share.
type heldSource struct {
	src         connector.Source[nexmark.Event]
	first, held int
	done        chan struct{}
	once        *sync.Once
}

func (s heldSource) Open(ctx context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[nexmark.Event], error) {
	r, err := s.src.Open(ctx, info, pos)
	if err != nil {
		return nil, err
	}
	return &heldReader{Reader: r, src: s, subtask: info.Subtask}, nil
}

type heldReader struct {
	connector.Reader[nexmark.Event]
	src     heldSource
	subtask int
}

func (r *heldReader) Read(ctx context.Context, buf []nexmark.Event) (int, error) {
	if r.subtask == r.src.held {
		// Nothing yet, as an unbounded reader would say (the contract:
		// block no longer than about 10ms).
		select {
		case <-r.src.done:
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(10 * time.Millisecond):
			return 0, nil
		}
	}
	n, err := r.Reader.Read(ctx, buf)
	if errors.Is(err, io.EOF) && r.subtask == r.src.first {
		r.src.once.Do(func() { close(r.src.done) })
	}
	return n, err
}

// runHeld runs query name at parallelism 2 with source subtask first
// reading its whole share before subtask held reads anything, and returns
// the records each subtask of each task sent, and the rows.
func runHeld(t *testing.T, name string, cfg nexmark.Config, first, held int) (map[string][]int64, []string) {
	t.Helper()
	q, _ := Lookup(name)
	src, err := nexmark.Source(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := weir.NewPipeline(weir.WithParallelism(2), weir.WithName(name))
	in := weir.FromSource(p, "nexmark", heldSource{src: src, first: first, held: held, done: make(chan struct{}), once: &sync.Once{}},
		weir.WithTimestamps(func(e nexmark.Event) int64 { return e.DateTime() }, 0))
	q.Build(in, Output{Dir: dir})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	sent := map[string][]int64{}
	for _, m := range p.Metrics() {
		for _, s := range m.Subtasks {
			sent[m.Name] = append(sent[m.Name], s.RecordsOut)
		}
	}
	return sent, normalize(t, readRows(t, dir))
}

// TestQueriesSubtasksShareNothing runs every query twice, once with source
// subtask 0 reading all of its share before subtask 1 starts and once the
// other way round, and requires every subtask of every task to send the
// same records both times. A subtask's output must depend on its own input
// alone: that is what a cluster gives it (its process shares nothing with
// the others) and what fine-grained failover relies on when it replays a
// subtask alone. Operators that share state between the subtasks of one
// process, as q7's pre-filter did, send more or less depending on which
// subtask ran first.
func TestQueriesSubtasksShareNothing(t *testing.T) {
	cfg := testConfig(20000)
	cfg.FirstEventRate, cfg.NextEventRate = 1000, 1000
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			a, rowsA := runHeld(t, name, cfg, 0, 1)
			b, rowsB := runHeld(t, name, cfg, 1, 0)
			if !maps.EqualFunc(a, b, slices.Equal[[]int64]) {
				t.Fatalf("records sent per task and subtask depend on which source subtask ran first:\n subtask 0 first: %v\n subtask 1 first: %v", describe(a), describe(b))
			}
			if !slices.Equal(rowsA, rowsB) {
				t.Fatalf("%d rows with subtask 0 first, %d with subtask 1 first", len(rowsA), len(rowsB))
			}
		})
	}
}

func describe(sent map[string][]int64) string {
	var s string
	for _, k := range slices.Sorted(maps.Keys(sent)) {
		s += fmt.Sprintf("%s %v; ", k, sent[k])
	}
	return s
}
