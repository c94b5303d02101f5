package cluster_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/internal/cluster"
	"github.com/weir-stream/weir/internal/cluster/pb"
)

// arrivals records when the sinks of a job wrote, in wall-clock time.
type arrivals struct {
	mu    sync.Mutex
	times []time.Time
}

func (a *arrivals) Open(context.Context, connector.SubtaskInfo) (connector.Writer[int64], error) {
	return a, nil
}
func (a *arrivals) Write(_ context.Context, batch []int64) error {
	if len(batch) > 0 {
		a.mu.Lock()
		a.times = append(a.times, time.Now())
		a.mu.Unlock()
	}
	return nil
}
func (a *arrivals) Flush(context.Context) error { return nil }
func (a *arrivals) Close() error                { return nil }

// longestGap returns the longest time without a write between from and
// to.
func (a *arrivals) longestGap(from, to time.Time) time.Duration {
	a.mu.Lock()
	ts := slices.Clone(a.times)
	a.mu.Unlock()
	slices.SortFunc(ts, func(x, y time.Time) int { return x.Compare(y) })
	var gap time.Duration
	last := from
	for _, t := range ts {
		if t.Before(from) {
			continue
		}
		if t.After(to) {
			break
		}
		gap = max(gap, t.Sub(last))
		last = t
	}
	return max(gap, to.Sub(last))
}

// flowProgram runs "flow": an unbounded rate-limited source whose
// records cross the data plane (rebalanced) into the arrivals sink.
type flowProgram struct {
	store string
	logs  *logLines
	sink  *arrivals
}

func (flowProgram) Jobs() []string { return []string{"flow"} }

func (f flowProgram) Open(_ context.Context, _, name string, args []string) (cluster.Pipeline, error) {
	// At-least-once: the arrivals sink is not transactional.
	opts := []weir.Option{weir.WithName(name), weir.WithParallelism(3), weir.WithGuarantee(weir.AtLeastOnce),
		weir.WithLog(func(l string) { f.logs.add(name + ": " + l) }),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 200 * time.Millisecond, StateDir: f.store, Log: true})}
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--restore" {
			opts = append(opts, weir.WithRestore(args[i+1]))
		}
	}
	p := weir.NewPipeline(opts...)
	s := weir.FromSource(p, "numbers", generator.New(-1, func(i int64) int64 { return i }, generator.WithRate(30_000)))
	weir.To(weir.Rebalance(s), "arrivals", connector.Sink[int64](f.sink))
	return pipeline{p}, nil
}

// BenchmarkLeaderTakeover kills the leading coordinator (in process,
// without releasing its lease) while a job runs, and reports how long the
// sinks went without a write around the kill (pause-ms) against the
// longest such gap in as long a time before it (batching-ms), and how
// long after the kill the standby completed its first checkpoint
// (checkpoint-gap-ms), for the lease period in the name.
func BenchmarkLeaderTakeover(b *testing.B) {
	for _, lease := range []time.Duration{time.Second, 3 * time.Second} {
		b.Run(fmt.Sprintf("lease=%v", lease), func(b *testing.B) {
			var pause, batching, ckpt time.Duration
			for range b.N {
				p, bt, c := leaderTakeover(b, lease)
				pause, batching, ckpt = pause+p, batching+bt, ckpt+c
			}
			n := float64(b.N)
			b.ReportMetric(float64(pause.Milliseconds())/n, "pause-ms")
			b.ReportMetric(float64(batching.Milliseconds())/n, "batching-ms")
			b.ReportMetric(float64(ckpt.Milliseconds())/n, "checkpoint-gap-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

func leaderTakeover(b *testing.B, lease time.Duration) (pause, batching, checkpointGap time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := b.TempDir()
	logs := newLogLines()
	prog := flowProgram{store: filepath.Join(dir, "store"), logs: logs, sink: &arrivals{}}
	cfg := func(ha bool, who string) cluster.CoordinatorConfig {
		return cluster.CoordinatorConfig{Listen: "127.0.0.1:0", Store: prog.store, Program: prog, HA: ha, LeasePeriod: lease,
			HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: time.Second, Log: func(l string) { logs.add(who + ": " + l) }}
	}
	a, err := cluster.NewCoordinator(ctx, cfg(false, "a"))
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	s, err := cluster.NewCoordinator(ctx, cfg(true, "b"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for i := 1; i <= 3; i++ {
		w := startWorker(b, ctx, cluster.WorkerConfig{ID: fmt.Sprintf("w%d", i), Coordinators: []string{a.Addr(), s.Addr()}, Program: prog})
		defer w.stop()
	}
	conn, err := cluster.Security{}.Dial(a.Addr())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	info, err := pb.NewCoordinatorClient(conn).Submit(ctx, &pb.SubmitRequest{Job: "flow"})
	if err != nil {
		b.Fatal(err)
	}
	logs.wait(b, "^"+info.Id+": checkpoint 5 completed")
	before := time.Now()
	time.Sleep(3 * time.Second) // a stretch of normal running to compare with
	killed := time.Now()
	a.Abandon()
	completed := "^" + info.Id + ": checkpoint [0-9]+ completed"
	n := logs.count(completed)
	<-s.Leading()
	logs.wait(b, "^b: job "+info.Id+": adopting")
	logs.waitCount(b, completed, n+1)
	checkpointGap = time.Since(killed)
	time.Sleep(time.Second)
	pause = prog.sink.longestGap(killed.Add(-100*time.Millisecond), time.Now())
	batching = prog.sink.longestGap(before, killed)
	return pause, batching, checkpointGap
}
