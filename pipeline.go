// Package weir is a stream processing engine: build a dataflow pipeline of
// typed streams, then run it in parallel with event time, keyed state and
// windows.
//
// A pipeline starts from sources (FromSource), transforms streams with Map,
// Filter, FlatMap, KeyBy, Process, windows and joins, and ends in sinks
// (To). Nothing runs until Run:
//
//	p := weir.NewPipeline(weir.WithParallelism(2))
//	words := weir.FlatMap(weir.FromSource(p, "lines", file.Lines("in.txt")), splitWords)
//	counts := weir.Reduce(weir.KeyBy(words, wordKey), addCounts)
//	weir.To(counts, "out", file.JSONSink[WordCount]("out"))
//	err := p.Run(ctx)
//
// Functions passed to operators run concurrently in several subtasks: they
// must not share mutable data except through the state API.
package weir

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/task"
)

// Pipeline is a dataflow graph under construction. Build it from one
// goroutine; Run runs it.
type Pipeline struct {
	g   plan.Graph
	cfg config
	err error // first construction error, reported by Run and Explain
	// running is the runtime of the current Run, for Metrics.
	running atomic.Pointer[task.Runtime]
}

type config struct {
	name              string
	watermarkInterval time.Duration
	bufferTimeout     time.Duration
	idleTimeout       time.Duration
	queueCapacity     int
}

// Option configures a pipeline.
type Option func(*Pipeline)

// WithName names the job.
func WithName(name string) Option { return func(p *Pipeline) { p.cfg.name = name } }

// WithParallelism sets the default number of parallel subtasks per
// operator (default 1).
func WithParallelism(n int) Option { return func(p *Pipeline) { p.g.Parallelism = n } }

// WithMaxParallelism sets the number of key groups (default 128): the upper
// bound of any operator's parallelism and the unit in which keyed state is
// split between subtasks. Keep it fixed for the life of a job.
func WithMaxParallelism(n int) Option { return func(p *Pipeline) { p.g.MaxParallelism = n } }

// WithChaining turns operator chaining on (the default) or off. Without it
// every operator runs in a task of its own.
func WithChaining(on bool) Option { return func(p *Pipeline) { p.g.DisableChaining = !on } }

// WithWatermarkInterval sets how often sources emit watermarks (default
// 200ms).
func WithWatermarkInterval(d time.Duration) Option {
	return func(p *Pipeline) { p.cfg.watermarkInterval = d }
}

// WithBufferTimeout bounds how long a source holds a partly filled output
// batch (default 100ms). Other tasks ship their batches whenever their input
// runs dry.
func WithBufferTimeout(d time.Duration) Option { return func(p *Pipeline) { p.cfg.bufferTimeout = d } }

// WithIdleTimeout marks a source subtask idle after it produced nothing for
// d, so that it does not hold back the watermark of downstream operators.
// 0 (the default) never marks sources idle.
func WithIdleTimeout(d time.Duration) Option { return func(p *Pipeline) { p.cfg.idleTimeout = d } }

// WithQueueCapacity sets how many batches each input channel buffers before
// its sender blocks (default 8).
func WithQueueCapacity(n int) Option { return func(p *Pipeline) { p.cfg.queueCapacity = n } }

// NewPipeline returns an empty pipeline.
func NewPipeline(opts ...Option) *Pipeline {
	p := &Pipeline{cfg: config{name: "job"}}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Name returns the job's name.
func (p *Pipeline) Name() string { return p.cfg.name }

func (p *Pipeline) setErr(err error) {
	if p.err == nil {
		p.err = err
	}
}

// Plan returns the physical plan.
func (p *Pipeline) plan() (*plan.Plan, error) {
	if p.err != nil {
		return nil, p.err
	}
	return plan.Build(&p.g)
}

// Explain returns the physical plan as text: the tasks, the operators
// chained in each, their parallelism and how records move between them.
func (p *Pipeline) Explain() (string, error) {
	pl, err := p.plan()
	if err != nil {
		return "", err
	}
	return pl.String(), nil
}

// Run runs the pipeline in this process until its bounded sources are
// exhausted and every record has reached the sinks, an operator fails, or
// ctx is cancelled. It returns nil on completion, the first failure, or
// ctx's error. Every goroutine Run starts has exited when it returns.
func (p *Pipeline) Run(ctx context.Context) error {
	pl, err := p.plan()
	if err != nil {
		return err
	}
	rt := task.New(pl, task.Options{Job: p.cfg.name, QueueCapacity: p.cfg.queueCapacity,
		WatermarkInterval: p.cfg.watermarkInterval, BufferTimeout: p.cfg.bufferTimeout,
		IdleTimeout: p.cfg.idleTimeout})
	p.running.Store(rt)
	if err := rt.Run(ctx); err != nil {
		return fmt.Errorf("job %q: %w", p.cfg.name, err)
	}
	return nil
}
