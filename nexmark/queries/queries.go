// Package queries holds the Nexmark benchmark queries as weir pipelines,
// following the Nexmark SQL of the nexmark/nexmark repository (window
// sizes, join conditions, output columns). docs/nexmark.md lists each
// query, its output schema and any deliberate difference from the SQL.
//
// A query reads a stream of nexmark.Event and writes result rows whose
// JSON field names are the SQL output column names, with times in epoch
// milliseconds. Queries whose SQL result updates write a changelog: each
// row carries "op" = "+I", "-U", "+U" or "-D", as Flink does.
package queries

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/file"
	"github.com/weir-stream/weir/connectors/stdout"
	"github.com/weir-stream/weir/nexmark"
)

// Query is one Nexmark query.
type Query struct {
	// Name is "q0", "q1", ...
	Name string
	// Description says what the query computes, in a line.
	Description string
	// Build adds the query to the pipeline of in, writing its rows to out
	// with Emit.
	Build func(in weir.Stream[nexmark.Event], out Output)
	// Tuned, set for a query that takes Options, builds it as Build does
	// under them; Build is then Tuned with the zero Options.
	Tuned func(in weir.Stream[nexmark.Event], out Output, o Options)
}

// Options change how a query runs beyond its SQL. The zero Options is
// the query as the SQL defines it.
type Options struct {
	// StateTTL, when positive, gives the state of an unbounded join a
	// time-to-live of processing time (weir.StateTTL, updated on create
	// and write): what it keeps longer is dropped, and rows that needed
	// it are not written. Of the queries, q20 takes it.
	StateTTL time.Duration
}

// BuildWith adds the query to the pipeline of in as Build does, under o.
// It fails when o is not the zero Options and the query takes none.
func (q Query) BuildWith(in weir.Stream[nexmark.Event], out Output, o Options) error {
	switch {
	case q.Tuned != nil:
		q.Tuned(in, out, o)
	case o != Options{}:
		return fmt.Errorf("nexmark: query %s takes no options such as a state time-to-live", q.Name)
	default:
		q.Build(in, out)
	}
	return nil
}

var registry = map[string]Query{}

// Register adds a query; queries register themselves in init.
func Register(q Query) {
	if _, dup := registry[q.Name]; dup {
		panic("queries: " + q.Name + " registered twice")
	}
	registry[q.Name] = q
}

// Lookup returns the query name.
func Lookup(name string) (Query, bool) {
	q, ok := registry[name]
	return q, ok
}

// Names returns the registered queries' names in numeric order.
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

// Output says where a query's rows go.
type Output struct {
	// Dir receives JSON-lines part files; if empty, rows go to Stdout, or
	// nowhere when Discard is set.
	Dir     string
	Stdout  io.Writer
	Discard bool
}

// Emit writes the rows of s to out.
func Emit[T any](s weir.Stream[T], out Output) {
	var sink connector.Sink[T]
	switch {
	case out.Dir != "":
		sink = file.JSONSink[T](out.Dir)
	case out.Discard:
		sink = discard[T]{}
	case out.Stdout != nil:
		sink = stdout.To[T](out.Stdout)
	default:
		sink = stdout.JSON[T]()
	}
	weir.To(s, "output", sink)
}

// Events adds the Nexmark source of cfg to p, with event time from the
// events' dateTime. Each subtask's events are in timestamp order.
func Events(p *weir.Pipeline, cfg nexmark.Config) (weir.Stream[nexmark.Event], error) {
	src, err := nexmark.Source(cfg)
	if err != nil {
		return weir.Stream[nexmark.Event]{}, err
	}
	return EventsFrom(p, src), nil
}

// EventsFrom adds src, a Nexmark source (nexmark.Source, perhaps
// wrapped), to p as Events does.
func EventsFrom(p *weir.Pipeline, src connector.Source[nexmark.Event]) weir.Stream[nexmark.Event] {
	return weir.FromSource(p, "nexmark", src, weir.WithTimestamps(func(e nexmark.Event) int64 { return e.DateTime() }, 0))
}

// Seconds is a duration in the SQL's units, for window sizes.
func Seconds(n int) time.Duration { return time.Duration(n) * time.Second }

// discard drops rows; it is idempotent, so exactly-once benchmarks accept it.
type discard[T any] struct{}

func (discard[T]) Open(context.Context, connector.SubtaskInfo) (connector.Writer[T], error) {
	return discard[T]{}, nil
}
func (discard[T]) Write(context.Context, []T) error { return nil }
func (discard[T]) Flush(context.Context) error      { return nil }
func (discard[T]) Close() error                     { return nil }
func (discard[T]) Idempotent() bool                 { return true }
