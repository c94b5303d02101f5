// Package inlinejob is a job as a user writes it: it imports weir and
// none of its internal packages, and instantiates the operators with its
// own record types. inline_test.go compiles it to see what the compiler
// inlines into the operators' per-record code here.
package inlinejob

import (
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/connectors/stdout"
)

type click struct {
	User string
	At   int64
}

type count struct{}

func (count) Create() int            { return 0 }
func (count) Add(n int, _ click) int { return n + 1 }
func (count) Merge(a, b int) int     { return a + b }
func (count) Result(n int) int       { return n }

// Build adds a keyed tumbling-window count to p.
func Build(p *weir.Pipeline) {
	clicks := weir.FromSource(p, "clicks", collection.Of(click{"ann", 1_000}),
		weir.WithTimestamps(func(c click) int64 { return c.At }, 0))
	perUser := weir.KeyBy(clicks, func(c click) string { return c.User })
	counts := weir.AggregateWindow(weir.WindowBy(perUser, weir.Tumbling(time.Minute)), count{})
	weir.To(counts, "print", stdout.JSON[weir.Windowed[string, int]]())
}
