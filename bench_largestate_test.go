package weir_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/generator"
)

// BenchmarkLargeStateCheckpointCost measures what checkpoints cost a job
// with large keyed state, under each state backend. A keyed job at
// parallelism 2, exactly-once, first loads WEIR_STATE_MB megabytes
// (default 100) of state: one 90-byte random value per key (about 100
// bytes with the key, as BenchmarkIncrementalCheckpoints), then updates
// as many values again, of keys drawn uniformly at random. Every variant
// processes the same events: memory and pebble, each with checkpoints
// off (guarantee none), every 1 s and every 100 ms (into a state
// directory on the local disk).
//
// The update phase runs from the moment the last load record was
// processed to the moment the last update was (so the final checkpoint
// after the end of the input is not in it); its events/s and events per
// CPU-second of the process are the figures to compare. The checkpoints
// are those triggered within it: how many completed, the median and the
// last one's duration and bytes written, the bytes the last one holds,
// and the longest synchronous pause. peak-rss-MiB is the process's,
// which covers earlier sub-benchmarks too: run one variant per process to
// read it.
func BenchmarkLargeStateCheckpointCost(b *testing.B) {
	mb, keys := stateSize()
	for _, backend := range []string{"memory", "pebble"} {
		for _, iv := range []time.Duration{0, time.Second, 100 * time.Millisecond} {
			name := "off"
			if iv > 0 {
				name = iv.String()
			}
			b.Run(fmt.Sprintf("%s/%dMB/%s", backend, mb, name), func(b *testing.B) {
				for range b.N {
					checkpointCost(b, backend, iv, keys, keys)
				}
			})
		}
	}
}

// checkpointCost runs the job of BenchmarkLargeStateCheckpointCost once
// (load keys, then updates updates) and reports its figures.
func checkpointCost(b *testing.B, backend string, interval time.Duration, keys, updates int64) {
	opts := []weir.Option{weir.WithParallelism(2), weir.WithStateBackend(weir.StateBackend{Name: backend, Dir: b.TempDir()})}
	if interval > 0 { // else no guarantee: an exactly-once job checkpoints
		opts = append(opts, weir.WithGuarantee(weir.ExactlyOnce),
			weir.WithCheckpoints(weir.CheckpointConfig{Interval: interval, StateDir: b.TempDir()}))
	}
	p := weir.NewPipeline(opts...)
	clock := &phaseClock{}
	events := keys + updates
	// Record i < keys loads key i; a later one updates a random key.
	in := weir.FromSource(p, "events", generator.Sequence(0, events))
	keyed := weir.KeyBy(in, func(i int64) int64 {
		if i < keys {
			return i
		}
		return int64(generator.Mix(7, uint64(i)) % uint64(keys))
	})
	out := weir.Process(keyed, func() weir.KeyedProcessFunction[int64, int64, int64] {
		return &phasedFiller{keys: keys, events: events, clock: clock}
	})
	weir.To(out, "discard", exactlyOnceDiscard[int64]{})
	start := time.Now()
	if err := p.Run(context.Background()); err != nil {
		b.Fatal(err)
	}
	loaded, ended := clock.loaded, clock.ended
	if loaded.wall.IsZero() || !ended.wall.After(loaded.wall) {
		b.Fatalf("phases not seen: load ended %v, updates ended %v", loaded.wall, ended.wall)
	}
	b.ReportMetric(loaded.wall.Sub(start).Seconds(), "load-s")
	b.ReportMetric(float64(updates)/ended.wall.Sub(loaded.wall).Seconds(), "events/s")
	b.ReportMetric(float64(updates)/(ended.cpu-loaded.cpu).Seconds(), "events/cpu-s")
	var cs []weir.CheckpointStats
	for _, c := range p.Report().Checkpoints {
		if c.Triggered.After(loaded.wall) && c.Triggered.Before(ended.wall) {
			if c.Status != "completed" {
				b.Logf("checkpoint %d %s: %s", c.ID, c.Status, c.Reason)
				continue
			}
			cs = append(cs, c)
		}
	}
	b.ReportMetric(float64(len(cs)), "checkpoints")
	if len(cs) > 0 {
		var durs, sizes []float64
		var sync time.Duration
		for _, c := range cs {
			durs = append(durs, c.Duration.Seconds())
			sizes = append(sizes, float64(c.Size)/(1<<20))
			sync = max(sync, c.Sync)
		}
		last := cs[len(cs)-1]
		b.ReportMetric(median(durs), "ckpt-median-s")
		b.ReportMetric(median(sizes), "ckpt-median-MiB")
		b.ReportMetric(last.Duration.Seconds(), "ckpt-last-s")
		b.ReportMetric(float64(last.Size)/(1<<20), "ckpt-last-MiB")
		b.ReportMetric(float64(last.FullSize)/(1<<20), "ckpt-last-holds-MiB")
		b.ReportMetric(sync.Seconds()*1000, "sync-max-ms")
	}
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-rss-MiB")
	b.ReportMetric(0, "ns/op")
}

// markWindow is how many of the last records of each phase mark the
// time they were processed: enough to cover the records the source's
// two subtasks can be apart.
const markWindow = 4096

// phasedFiller is a randomFiller of records that are their own index:
// records 0..keys-1 load, the rest up to events update. The last
// markWindow records of each phase mark the phase clock, so the clock
// holds when each phase's last record was processed.
type phasedFiller struct {
	randomFiller
	keys, events int64
	clock        *phaseClock
}

func (f *phasedFiller) ProcessElement(ctx *weir.KeyedContext[int64, int64], i int64) error {
	if err := f.randomFiller.ProcessElement(ctx, i); err != nil {
		return err
	}
	switch {
	case i < f.keys && i >= f.keys-markWindow:
		f.clock.mark(&f.clock.loaded)
	case i >= f.events-markWindow:
		f.clock.mark(&f.clock.ended)
	}
	return nil
}

// phaseClock holds when each phase of a run ended, by the wall clock and
// the process's CPU time. Subtasks mark it concurrently; it is read after
// the run.
type phaseClock struct {
	mu            sync.Mutex
	loaded, ended instant
}

type instant struct {
	wall time.Time
	cpu  time.Duration
}

// mark sets *at to now unless it holds a later instant.
func (c *phaseClock) mark(at *instant) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if now.After(at.wall) {
		*at = instant{wall: now, cpu: cpuTime()}
	}
}
