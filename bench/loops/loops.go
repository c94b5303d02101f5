// Package loops computes the Nexmark queries of the Flink comparison with
// hand-written, single-threaded Go loops over the generated events: no
// engine, no exchange, no checkpoints, state in plain maps. Their
// throughput is the "limit" column of bench/compare: how fast one core can
// generate the events and compute each query's result, and so how close
// weir comes to what the hardware allows.
//
// Each loop reads the events in the order one nexmark.Source subtask reads
// them (one event from each generator in turn), which is timestamp order,
// so a loop's watermark is simply the latest timestamp: windows close as
// soon as a later event arrives, and no event is ever late. A loop writes
// the same rows as the weir query of the same name (changelog queries: the
// same final table), which the package's test checks against weir.
package loops

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"sort"
	"strings"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/nexmark"
)

// Loop is one query as a plain loop.
type Loop struct {
	// Name is the query's name, "q0", "q1", ...
	Name string
	// Count computes the query over the events of cfg on the calling
	// goroutine and returns the number of rows it produced, discarding
	// the rows themselves.
	Count func(cfg nexmark.Config) (int64, error)
	// Rows computes the query over the events of cfg and returns its rows
	// as JSON documents, encoded as weir's JSON file sink encodes them.
	Rows func(cfg nexmark.Config) ([]string, error)
}

var registry = map[string]Loop{}

// register adds the loop f for query name. f reads every event of events
// and hands each result row to emit.
func register[R any](name string, f func(events iter.Seq[*nexmark.Event], emit func(R))) {
	if _, dup := registry[name]; dup {
		panic("loops: " + name + " registered twice")
	}
	registry[name] = Loop{
		Name: name,
		Count: func(cfg nexmark.Config) (int64, error) {
			events, err := read(cfg)
			if err != nil {
				return 0, err
			}
			var n int64
			f(events, func(R) { n++ })
			return n, nil
		},
		Rows: func(cfg nexmark.Config) ([]string, error) {
			events, err := read(cfg)
			if err != nil {
				return nil, err
			}
			var out []string
			var encErr error
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			f(events, func(r R) {
				b.Reset()
				if err := enc.Encode(&r); err != nil && encErr == nil {
					encErr = err
				}
				out = append(out, strings.TrimSuffix(b.String(), "\n"))
			})
			return out, encErr
		},
	}
}

// Lookup returns the loop of query name.
func Lookup(name string) (Loop, bool) {
	l, ok := registry[name]
	return l, ok
}

// Names returns the names of the queries that have a loop, in numeric
// order.
func Names() []string {
	var out []string
	for n := range registry {
		out = append(out, n)
	}
	sort.Slice(out, func(a, b int) bool {
		if len(out[a]) != len(out[b]) {
			return len(out[a]) < len(out[b])
		}
		return out[a] < out[b]
	})
	return out
}

// read returns the events of cfg in the order a single nexmark.Source
// subtask reads them, generated in batches into one reused buffer: the
// yielded event is valid only until the next one.
func read(cfg nexmark.Config) (iter.Seq[*nexmark.Event], error) {
	src, err := nexmark.Source(cfg)
	if err != nil {
		return nil, err
	}
	r, err := src.Open(context.Background(), connector.SubtaskInfo{Operator: "loop", Subtask: 0, Parallelism: 1}, nil)
	if err != nil {
		return nil, err
	}
	return func(yield func(*nexmark.Event) bool) {
		defer r.Close()
		buf := make([]nexmark.Event, 1024)
		for {
			n, err := r.Read(context.Background(), buf)
			if err == io.EOF {
				return
			}
			if err != nil {
				panic(fmt.Sprintf("loops: reading generated events: %v", err))
			}
			for i := range buf[:n] {
				if !yield(&buf[i]) {
					return
				}
			}
		}
	}, nil
}
