package weir_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/generator"
)

// BenchmarkCheckpointOverhead runs a keycount-style job (a tumbling
// one-second window count over 100k keys, exactly-once, parallelism 2) with
// checkpoints off and every 10s, 1s and 100ms, over the same 60M events.
// Compare events/s across the sub-benchmarks. WEIR_WATERMARK_INTERVAL
// (a duration) sets the sources' watermark interval, 200ms by default;
// a source also sends its watermark ahead of each barrier, so the windows
// a checkpoint writes are those its slowest source subtask left open.
// align-ms and sync-ms are the longest barrier alignment and synchronous
// pause of any task, per checkpoint.
func BenchmarkCheckpointOverhead(b *testing.B) {
	const events = 60_000_000
	wm := 200 * time.Millisecond
	if s := os.Getenv("WEIR_WATERMARK_INTERVAL"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			b.Fatalf("WEIR_WATERMARK_INTERVAL=%q: want a positive duration", s)
		}
		wm = d
	}
	for _, c := range []struct {
		iv        time.Duration
		unaligned bool
	}{{0, false}, {10 * time.Second, false}, {time.Second, false}, {100 * time.Millisecond, false}, {100 * time.Millisecond, true}} {
		iv, name := c.iv, "off"
		if iv > 0 {
			name = iv.String()
		}
		if c.unaligned {
			name += "-unaligned"
		}
		b.Run(name, func(b *testing.B) {
			var completed int
			var written int64
			var total, aligned, sync time.Duration
			for range b.N {
				opts := []weir.Option{weir.WithParallelism(2), weir.WithWatermarkInterval(wm)}
				if iv > 0 {
					opts = append(opts, weir.WithGuarantee(weir.ExactlyOnce),
						weir.WithCheckpoints(weir.CheckpointConfig{Interval: iv, StateDir: b.TempDir(), Unaligned: c.unaligned}))
				}
				p := weir.NewPipeline(opts...)
				src := weir.FromSource(p, "gen", generator.New(events, func(i int64) keyEvent {
					return keyEvent{Key: int64(generator.Mix(1, uint64(i)) % 100_000), Time: i / 100}
				}), weir.WithTimestamps(func(e keyEvent) int64 { return e.Time }, 0))
				w := weir.WindowBy(weir.KeyBy(src, func(e keyEvent) int64 { return e.Key }), weir.Tumbling(time.Second))
				weir.To(weir.AggregateWindow(w, countAgg{}), "discard", exactlyOnceDiscard[weir.Windowed[int64, int64]]{})
				start := time.Now()
				if err := p.Run(context.Background()); err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
				for _, c := range p.Report().Checkpoints {
					if c.Status == "completed" {
						completed++
						written += c.Size
						aligned += c.Alignment
						sync += c.Sync
					}
				}
			}
			b.ReportMetric(float64(events)*float64(b.N)/total.Seconds(), "events/s")
			b.ReportMetric(float64(completed)/float64(b.N), "checkpoints/run")
			b.ReportMetric(float64(written)/float64(b.N)/(1<<20), "written-MiB/run")
			if completed > 0 {
				b.ReportMetric(aligned.Seconds()*1e3/float64(completed), "align-ms/checkpoint")
				b.ReportMetric(sync.Seconds()*1e3/float64(completed), "sync-ms/checkpoint")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkCheckpointDuration fills keyed value state with WEIR_STATE_MB
// megabytes (default 100) of 100-byte values and reports the duration,
// synchronous pause and size of the checkpoint that stores it in a state
// directory on disk.
func BenchmarkCheckpointDuration(b *testing.B) {
	mb, keys := stateSize()
	b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
		for range b.N {
			p := weir.NewPipeline(weir.WithParallelism(2), weir.WithGuarantee(weir.ExactlyOnce),
				weir.WithCheckpoints(weir.CheckpointConfig{Interval: time.Hour, StateDir: b.TempDir()}))
			src := weir.FromSource(p, "gen", generator.Sequence(0, keys))
			filled := weir.Process(weir.KeyBy(src, func(v int64) int64 { return v }), func() weir.KeyedProcessFunction[int64, int64, int64] {
				return &filler{}
			})
			weir.To(filled, "discard", exactlyOnceDiscard[int64]{})
			if err := p.Run(context.Background()); err != nil {
				b.Fatal(err)
			}
			cs := p.Report().Checkpoints
			last := cs[len(cs)-1] // the final checkpoint holds all the state
			b.ReportMetric(last.Duration.Seconds(), "checkpoint-s")
			b.ReportMetric(last.Sync.Seconds(), "sync-pause-s")
			b.ReportMetric(float64(last.Size)/(1<<20), "checkpoint-MiB")
			b.ReportMetric(0, "ns/op")
		}
	})
}

// stateSize returns the megabytes of state WEIR_STATE_MB asks for
// (default 100) and the number of 100-byte values that fill them.
func stateSize() (mb int, keys int64) {
	mb = 100
	if s := os.Getenv("WEIR_STATE_MB"); s != "" {
		mb, _ = strconv.Atoi(s)
	}
	return mb, int64(mb) << 20 / 100
}

// filler keeps a 100-byte value per key; opened, if set, is called
// when it opens.
type filler struct {
	v      *weir.ValueState[string, int64]
	opened func()
}

var value100 = string(make([]byte, 90))

func (f *filler) Open(sc *weir.StateContext[int64]) error {
	f.v = weir.NewValueState[string](sc, "v")
	if f.opened != nil {
		f.opened()
	}
	return nil
}

func (f *filler) ProcessElement(_ *weir.KeyedContext[int64, int64], v int64) error {
	f.v.Update(value100)
	return nil
}

// exactlyOnceDiscard drops records; it is idempotent, so exactly-once jobs
// accept it.
type exactlyOnceDiscard[T any] struct{ discard[T] }

func (exactlyOnceDiscard[T]) Idempotent() bool { return true }
