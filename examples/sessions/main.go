// Command sessions groups each user's clicks into event-time sessions
// (a session ends after 30 minutes without a click), keeps a session's
// state 10 minutes past its end so that late clicks update it (the
// session fires again), and sends clicks later than that to a side
// output instead of dropping them.
//
//	go run ./examples/sessions --input examples/sessions/testdata/clicks.jsonl
//
// prints one JSON line per session result, and one per late click on
// standard error.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/file"
	"github.com/weir-stream/weir/connectors/stdout"
)

// Click is one line of the input.
type Click struct {
	User string `json:"user"`
	At   int64  `json:"at"` // event time, epoch milliseconds
}

// Session is one result: a user's clicks in one session so far.
type Session struct {
	User   string `json:"user"`
	Start  int64  `json:"start"`
	End    int64  `json:"end"` // the last click plus the gap
	Clicks int    `json:"clicks"`
}

const (
	gap        = 30 * time.Minute
	lateness   = 10 * time.Minute
	outOfOrder = time.Minute
)

// countClicks counts a session's clicks.
type countClicks struct{}

func (countClicks) Create() int            { return 0 }
func (countClicks) Add(n int, _ Click) int { return n + 1 }
func (countClicks) Merge(a, b int) int     { return a + b }
func (countClicks) Result(n int) int       { return n }

// build adds the sessionization to p: clicks from src, session results
// to sessions, late clicks to late.
func build(p *weir.Pipeline, src connector.Source[Click], sessions connector.Sink[Session], late connector.Sink[Click]) {
	// One reader keeps the file's order, so which clicks are late depends
	// only on the input (and on when watermarks are emitted).
	clicks := weir.FromSource(p, "clicks", src, weir.SourceParallelism(1),
		weir.WithTimestamps(func(c Click) int64 { return c.At }, outOfOrder))
	tooLate := weir.NewOutputTag[Click]("late-clicks")
	windows := weir.WindowBy(weir.KeyBy(clicks, func(c Click) string { return c.User }), weir.Session(gap)).
		AllowedLateness(lateness).
		LateTo(tooLate)
	counts := weir.AggregateWindow(windows, countClicks{})
	results := weir.Map(counts, func(w weir.Windowed[string, int]) Session {
		return Session{User: w.Key, Start: w.Window.Start, End: w.Window.End, Clicks: w.Value}
	})
	weir.To(results, "sessions", sessions)
	weir.To(weir.SideOutput(tooLate), "late-clicks", late)
}

// run sessionizes the clicks in the JSON-lines file input.
func run(ctx context.Context, input string, sessions, late io.Writer, opts ...weir.Option) error {
	p := weir.NewPipeline(opts...)
	build(p, file.JSONLines[Click](file.Options{}, input), stdout.To[Session](sessions), stdout.To[Click](late))
	return p.Run(ctx)
}

func main() {
	input := flag.String("input", "", "JSON-lines file of clicks")
	flag.Parse()
	if err := run(context.Background(), *input, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "sessions:", err)
		os.Exit(1)
	}
}
