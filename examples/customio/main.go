// Command customio counts page views exactly-once with a source and a
// sink of its own, written against weir's connector API:
//
//   - SegmentSource (segments.go) reads an access log kept as numbered
//     segment files (1.log, 2.log, ...), its Position the segment and the
//     byte offset of the next line, so a restored job seeks back to where
//     its checkpoint was taken;
//   - KVSink (kvstore.go) keeps the latest value of each key in a
//     directory of files and commits with checkpoints (two-phase commit,
//     connector.Committer), so the store only shows the counts of
//     completed checkpoints.
//
// Each line of the log is "<time> <user> <page>"; the job keeps each
// page's view count in keyed state and writes it to the store, one file
// per page (the page path-escaped, e.g. %2Fhome.value):
//
//	go run ./examples/customio --log logs --store views --state-dir state
//	go run ./examples/customio --log logs --store views --follow   # tail the log
//
// The guarantee and checkpoints are set in Go (weir.WithGuarantee,
// weir.WithCheckpoints). main_test.go runs both connectors through the
// conformance suite (connector/connectortest) and the job with injected
// failures, whose store equals the failure-free run's.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
)

// View is one page view, parsed from a line of the log.
type View struct {
	User string
	Page string
}

// parseView emits the view on line; lines that are not "<time> <user>
// <page>" (blank ones, say) are skipped.
func parseView(line string, emit func(View)) {
	if f := strings.Fields(line); len(f) == 3 {
		emit(View{User: f[1], Page: f[2]})
	}
}

// viewCount keeps a page's view count in keyed state, which checkpoints
// save and restores bring back, and emits it after every view.
type viewCount struct {
	n *weir.ValueState[int64, string]
}

func (c *viewCount) Open(sc *weir.StateContext[string]) error {
	c.n = weir.NewValueState[int64](sc, "views")
	return nil
}

func (c *viewCount) ProcessElement(ctx *weir.KeyedContext[string, Entry], v View) error {
	n, _ := c.n.Value()
	n++
	c.n.Update(n)
	ctx.Emit(Entry{Key: v.Page, Value: strconv.FormatInt(n, 10)})
	return nil
}

// build adds the job to p: lines from src, counts to sink.
func build(p *weir.Pipeline, src connector.Source[string], sink connector.Sink[Entry]) {
	lines := weir.FromSource(p, "access-log", src, weir.SourceUID("access-log"))
	views := weir.FlatMap(lines, parseView, weir.Name("parse"))
	counts := weir.Process(weir.KeyBy(views, func(v View) string { return v.Page }),
		func() *viewCount { return &viewCount{} }, weir.Name("count"), weir.UID("count"))
	weir.To(counts, "store", sink, weir.UID("store"))
}

// exactlyOnce is the job's fault tolerance: checkpoints every interval
// into stateDir (in memory if empty), and the two-phase commit of the
// sink tied to them.
func exactlyOnce(interval time.Duration, stateDir string) []weir.Option {
	return []weir.Option{
		weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: interval, StateDir: stateDir}),
	}
}

// run runs the command with its arguments (without the program name).
func run(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("customio", flag.ContinueOnError)
	fs.SetOutput(stderr)
	logDir := fs.String("log", "", "directory of the access log's segments (1.log, 2.log, ...)")
	store := fs.String("store", "", "directory of the key-value store of view counts")
	follow := fs.Bool("follow", false, "tail the log: wait for new lines instead of ending")
	parallelism := fs.Int("parallelism", 2, "parallelism of every operator")
	interval := fs.Duration("checkpoint-interval", time.Second, "time between checkpoints")
	stateDir := fs.String("state-dir", "", "directory of checkpoints (in memory if empty)")
	restore := fs.Bool("restore", false, "resume a stopped --follow run from the latest checkpoint in --state-dir")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *logDir == "" || *store == "" {
		return errors.New("--log and --store are required")
	}
	opts := append(exactlyOnce(*interval, *stateDir), weir.WithName("page-views"), weir.WithParallelism(*parallelism))
	if *restore {
		opts = append(opts, weir.WithRestore("latest"))
	}
	p := weir.NewPipeline(opts...)
	build(p, SegmentSource(*logDir, *follow), KVSink(*store))
	return p.Run(ctx)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil && ctx.Err() == nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "customio:", err)
		}
		os.Exit(1)
	}
}
