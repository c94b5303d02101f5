package sql_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/nexmark"
	"github.com/weir-stream/weir/nexmark/queries"
	"github.com/weir-stream/weir/sql"
)

// BenchmarkNexmarkSQL runs the query WEIR_BENCH_QUERY (default q7) from
// its published SQL over WEIR_BENCH_EVENTS events (default 500000) per
// iteration, exactly-once with checkpoints every second, for profiling
// (-cpuprofile); weir bench nexmark --sql reports the figures.
func BenchmarkNexmarkSQL(b *testing.B) {
	q := os.Getenv("WEIR_BENCH_QUERY")
	if q == "" {
		q = "q7"
	}
	events := int64(500000)
	if v, err := strconv.ParseInt(os.Getenv("WEIR_BENCH_EVENTS"), 10, 64); err == nil {
		events = v
	}
	cfg := nexmark.DefaultConfig()
	cfg.NumEvents = events
	text, vars, err := queries.SQLScript(q, cfg)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		s, err := sql.Parse(text, sql.Options{Vars: vars})
		if err != nil {
			b.Fatal(err)
		}
		p := weir.NewPipeline(weir.WithParallelism(2), weir.WithGuarantee(weir.ExactlyOnce),
			weir.WithCheckpoints(weir.CheckpointConfig{Interval: time.Second}))
		if err := s.Build(p); err != nil {
			b.Fatal(err)
		}
		if err := p.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
