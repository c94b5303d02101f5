// Command weirrun runs one Nexmark query on weir, embedded, and prints its
// steady-state throughput in the format of bench/flink's runner, so that
// bench/compare can read both alike.
//
//	weirrun --query q5 --events 10000000 -p 2 [--warmup-events N]
//	        [--checkpoint-interval 1s] [--state-dir DIR] [--generators 100]
//	        [--cpuprofile FILE] [--memprofile FILE] [--sql]
//
// One job runs over warm-up plus measured events, output discarded. The
// measured phase starts when the source subtasks together have read the
// warm-up events and ends when the job has finished (including its final
// checkpoint); the wall time and the process's own CPU time (getrusage) of
// that phase are reported. With --checkpoint-interval the job runs
// exactly-once with aligned checkpoints written to --state-dir (a temporary
// directory by default, removed afterwards).
//
// With --sql the query is its published Flink SQL (queries.SQLScript: the
// same events, the published 'blackhole' sink) run by weir's SQL layer.
// Its sources are the SQL tables' own, so the measured phase starts when
// the process's nexmark readers have read the warm-up events once per
// source task (nexmark.Read), polled every millisecond during the warm-up
// only.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/nexmark"
	"github.com/weir-stream/weir/nexmark/queries"
	"github.com/weir-stream/weir/sql"
)

func main() {
	query := flag.String("query", "q0", "the query")
	events := flag.Int64("events", 10_000_000, "events in the measured phase")
	warmup := flag.Int64("warmup-events", 0, "events before the measured phase, in the same job")
	par := flag.Int("p", runtime.GOMAXPROCS(0), "parallelism of every operator")
	interval := flag.Duration("checkpoint-interval", 0, "exactly-once checkpoints at this interval (0: no checkpoints)")
	stateDir := flag.String("state-dir", "", "checkpoint directory (default: a temporary one)")
	generators := flag.Int("generators", 100, "Beam generators the event space is split into")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	memProfile := flag.String("memprofile", "", "write a heap profile (allocations of the whole run) to this file at the end")
	fromSQL := flag.Bool("sql", false, "run the query's published Flink SQL instead of the Go-API query")
	flag.Parse()
	setMemoryBudget()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "weirrun:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*query, *events, *warmup, *par, *interval, *stateDir, *generators, *fromSQL); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "weirrun:", err)
		os.Exit(1)
	}
	if *memProfile != "" {
		f, err := os.Create(*memProfile)
		if err == nil {
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "weirrun:", err)
			os.Exit(1)
		}
	}
}

func run(query string, events, warmup int64, par int, interval time.Duration, stateDir string, generators int, fromSQL bool) error {
	q, ok := queries.Lookup(query)
	if !ok && !fromSQL {
		return fmt.Errorf("unknown query %q; queries: %v", query, queries.Names())
	}
	if events < 1 || warmup < 0 || par < 1 || generators < 1 {
		return fmt.Errorf("--events, -p and --generators must be positive, --warmup-events not negative")
	}
	cfg := nexmark.DefaultConfig()
	cfg.NumEvents = warmup + events
	cfg.NumEventGenerators = generators
	src, err := nexmark.Source(cfg)
	if err != nil {
		return err
	}
	opts := []weir.Option{weir.WithParallelism(par), weir.WithName("weirrun-" + query)}
	if interval > 0 {
		if stateDir == "" {
			dir, err := os.MkdirTemp("", "weirrun-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			stateDir = dir
		}
		opts = append(opts, weir.WithGuarantee(weir.ExactlyOnce),
			weir.WithCheckpoints(weir.CheckpointConfig{Interval: interval, StateDir: stateDir}))
	}
	p := weir.NewPipeline(opts...)
	ph := &phase{warmup: warmup}
	if fromSQL {
		text, vars, err := queries.SQLScript(query, cfg)
		if err != nil {
			return err
		}
		s, err := sql.Parse(text, sql.Options{Vars: vars})
		if err != nil {
			return err
		}
		if err := s.Build(p); err != nil {
			return err
		}
	} else {
		in := weir.FromSource(p, "nexmark", countingSource{src, ph},
			weir.WithTimestamps(func(e nexmark.Event) int64 { return e.DateTime() }, 0))
		q.Build(in, queries.Output{Discard: true})
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cpu0, t0 := cpuTime(), time.Now()
	if warmup == 0 {
		ph.mark()
	} else if fromSQL {
		done := make(chan struct{})
		defer close(done)
		go ph.poll(p, done)
	}
	if err := p.Run(ctx); err != nil {
		return err
	}
	endWall, endCPU := time.Now(), cpuTime()
	start := ph.start.Load()
	if start == nil {
		return fmt.Errorf("the sources never passed the warm-up (%d of %d events)", ph.read.Load(), warmup)
	}
	wall, cpu := endWall.Sub(start.wall), endCPU-start.cpu
	fmt.Printf("%s: %d events after %d warm-up, parallelism %d, %d ms wall, %d ms CPU: %.0f events/s, %.0f events per CPU-second (whole run %d ms wall, %d ms CPU)\n",
		query, events, warmup, par, wall.Milliseconds(), cpu.Milliseconds(),
		float64(events)/wall.Seconds(), float64(events)/cpu.Seconds(),
		endWall.Sub(t0).Milliseconds(), (endCPU - cpu0).Milliseconds())
	return nil
}

// phase marks the start of the measured phase: the moment the source
// subtasks together have read the warm-up events.
type phase struct {
	warmup int64
	read   atomic.Int64
	start  atomic.Pointer[instant]
}

type instant struct {
	wall time.Time
	cpu  time.Duration
}

func (p *phase) add(n int64) {
	after := p.read.Add(n)
	if before := after - n; before < p.warmup && after >= p.warmup {
		p.mark()
	}
}

// poll marks the start when the nexmark readers have read the warm-up
// events once for each source task of pl, checking every millisecond
// until then or until done.
func (p *phase) poll(pl *weir.Pipeline, done <-chan struct{}) {
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		sources := int64(0)
		for _, m := range pl.Metrics() {
			if m.Source {
				sources++
			}
		}
		read := nexmark.Read()
		if sources > 0 {
			p.read.Store(read / sources)
		}
		if sources > 0 && read >= p.warmup*sources {
			p.mark()
			return
		}
	}
}

func (p *phase) mark() { p.start.Store(&instant{wall: time.Now(), cpu: cpuTime()}) }

// countingSource passes the source's readers through, counting what they
// read in phase (once per batch, not per event).
type countingSource struct {
	connector.Source[nexmark.Event]
	ph *phase
}

func (s countingSource) Open(ctx context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[nexmark.Event], error) {
	r, err := s.Source.Open(ctx, info, pos)
	if err != nil {
		return nil, err
	}
	return countingReader{r, s.ph}, nil
}

type countingReader struct {
	connector.Reader[nexmark.Event]
	ph *phase
}

func (r countingReader) Read(ctx context.Context, buf []nexmark.Event) (int, error) {
	n, err := r.Reader.Read(ctx, buf)
	if n > 0 {
		r.ph.add(int64(n))
	}
	return n, err
}

// setMemoryBudget sets GOGC=400 and GOMEMLIMIT to a quarter of the
// machine's memory, each unless the environment sets it.
func setMemoryBudget() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		var si syscall.Sysinfo_t
		if err := syscall.Sysinfo(&si); err == nil && si.Totalram > 0 {
			debug.SetMemoryLimit(int64(uint64(si.Totalram) * uint64(si.Unit) / 4))
		}
	}
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
