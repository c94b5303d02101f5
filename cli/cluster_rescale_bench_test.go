package cli_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir/internal/cluster"
	"github.com/weir-stream/weir/internal/cluster/pb"
)

// TestRescalePauseBenchmark measures the pause of a change of
// parallelism from 2 to 4 of a job on a cluster of four worker processes:
// weir rescale against weir stop --savepoint and weir submit
// --from-savepoint at the new parallelism, and against weir rescale
// --operator of the stateful task (live), by state size. It runs only
// when WEIR_BENCH_RESCALE gives the runs per size (WEIR_BENCH_RESCALE_MB
// the sizes, default "10 100"); docs/benchmarks.md has its figures.
//
// The job is largestate (--value-bytes 100, keys = size / 100 bytes),
// throttled so that each of its two passes takes about 5 s (10 MB) or
// 10 s (100 MB); the change starts once the second pass writes rows, when
// all the state is there. The pause runs from the client's call (Rescale,
// or the stop's Savepoint) to the first moment the job's next run shows a
// record written in the coordinator's job status, polled every 5 ms with
// heartbeats every 50 ms: both ways pay the same heartbeat lag of up to
// 50 ms. Runs alternate the two ways.
func TestRescalePauseBenchmark(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("WEIR_BENCH_RESCALE"))
	if runs < 1 {
		t.Skip("a benchmark: set WEIR_BENCH_RESCALE to the runs per size")
	}
	sizes := strings.Fields(os.Getenv("WEIR_BENCH_RESCALE_MB"))
	if len(sizes) == 0 {
		sizes = []string{"10", "100"}
	}
	for _, mb := range sizes {
		n, err := strconv.Atoi(mb)
		if err != nil {
			t.Fatal(err)
		}
		var rescale, manual, reported, live, liveReported, unmoved []time.Duration
		var bytes int64
		for i := range runs {
			c := &testCluster{t: t, dir: t.TempDir(), workers: map[string]*proc{}, replacement: "1m",
				coordFlags: []string{"--heartbeat-interval", "50ms"}}
			c.store = filepath.Join(c.dir, "store")
			c.startCoordinator("127.0.0.1:0")
			for w := 1; w <= 4; w++ {
				c.startWorker(fmt.Sprintf("w%d", w))
			}
			b := newPauseBench(t, c, n)
			order := []int{0, 1, 2} // alternate which way goes first
			if i%2 != 0 {
				order = []int{2, 1, 0}
			}
			for _, way := range order {
				switch way {
				case 0:
					p, rep := b.rescale()
					rescale, reported = append(rescale, p), append(reported, rep)
				case 1:
					p, size := b.manual()
					manual, bytes = append(manual, p), size
				case 2:
					p, rep, u := b.live()
					live, liveReported, unmoved = append(live, p), append(liveReported, rep), append(unmoved, u)
				}
			}
			c.coord.kill()
			for _, w := range c.workers {
				w.kill()
			}
		}
		t.Logf("%d MB of state (savepoint %.1f MB), %d runs, parallelism 2 -> 4:", n, float64(bytes)/1e6, runs)
		t.Logf("  weir rescale:                          median %v, range %v", median(rescale), spread(rescale))
		t.Logf("    (the coordinator's own measure, worker-timed: median %v, range %v)", median(reported), spread(reported))
		t.Logf("  weir stop --savepoint + submit --from-savepoint: median %v, range %v", median(manual), spread(manual))
		t.Logf("  weir rescale --operator keep (live):   median %v, range %v", median(live), spread(live))
		t.Logf("    (the engine's own measure, trigger to restored: median %v, range %v)", median(liveReported), spread(liveReported))
		t.Logf("    key groups that stay on their worker, taken in memory: median %v, range %v", median(unmoved), spread(unmoved))
	}
}

// pauseBench runs the benchmark's job on a cluster.
type pauseBench struct {
	t    *testing.T
	c    *testCluster
	cc   pb.CoordinatorClient
	args []string
}

func newPauseBench(t *testing.T, c *testCluster, mb int) *pauseBench {
	conn, err := cluster.Security{}.Dial(c.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	keys := mb * 10_000 // 100 bytes each
	rate := float64(keys) / 5
	if mb >= 100 {
		rate = float64(keys) / 10
	}
	args := []string{"--keys", strconv.Itoa(keys), "--value-bytes", "100", "--rate", fmt.Sprint(rate), "-p", "2",
		"--guarantee", "exactly-once", "--checkpoint-interval", "1m"}
	return &pauseBench{t: t, c: c, cc: pb.NewCoordinatorClient(conn), args: args}
}

// submit starts the job writing to a new output directory and waits
// until it writes rows: its state is complete. It returns the job's id
// and arguments.
func (b *pauseBench) submit() (string, []string) {
	args := append(slices.Clone(b.args), "--output", filepath.Join(b.c.dir, fmt.Sprint("out", time.Now().UnixNano())))
	info, err := b.cc.Submit(context.Background(), &pb.SubmitRequest{Job: "largestate", Args: args})
	if err != nil {
		b.t.Fatal(err)
	}
	b.firstWrite(info.Id)
	return info.Id, args
}

// firstWrite polls job id until it shows a record written and returns
// when it did.
func (b *pauseBench) firstWrite(id string) time.Time {
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		info, err := b.cc.GetJob(context.Background(), &pb.GetJobRequest{Id: id})
		if err != nil {
			b.t.Fatal(err)
		}
		if info.RecordsWritten > 0 {
			return time.Now()
		}
		if info.State != cluster.Running && info.State != cluster.Waiting {
			b.t.Fatalf("job %s is %s before it wrote a record: %s", id, info.State, info.Error)
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.t.Fatalf("job %s wrote nothing in 5 minutes:\n%s", id, b.c.coord.output())
	return time.Time{}
}

// rescale measures weir rescale; it returns the pause and the
// coordinator's own measure of it.
func (b *pauseBench) rescale() (time.Duration, time.Duration) {
	id, _ := b.submit()
	t0 := time.Now()
	if _, err := b.cc.Rescale(context.Background(), &pb.RescaleRequest{Id: id, Parallelism: 4}); err != nil {
		b.t.Fatal(err)
	}
	pause := b.firstWrite(id).Sub(t0)
	m := b.c.coord.waitFor(`job ` + id + `: first record written (\S+) after the rescale's stop`)
	reported, err := time.ParseDuration(m[1])
	if err != nil {
		b.t.Fatal(err)
	}
	b.cc.CancelJob(context.Background(), &pb.GetJobRequest{Id: id})
	return pause, reported
}

// live measures weir rescale --operator keep: the stateful task alone
// changes parallelism, live. The pause of the key groups that move to
// other workers runs to the first moment a new subtask (3 or 4 of the
// task) shows a record out or written in the job's status; that of the
// key groups that stay (the task's first new subtask takes those of its
// first old one, on the same worker) to when its worker logs that it took
// them in memory. It returns the first, the engine's own measure, and
// the second.
func (b *pauseBench) live() (time.Duration, time.Duration, time.Duration) {
	id, _ := b.submit()
	marks := map[*proc]int{}
	for _, w := range b.c.workers {
		marks[w] = w.mark()
	}
	t0 := time.Now()
	info, err := b.cc.Rescale(context.Background(), &pb.RescaleRequest{Id: id, Operator: "keep", Parallelism: 4})
	if err != nil {
		b.t.Fatal(err)
	}
	// New subtask 0 takes the key groups of old subtask 0 on the same
	// worker: it takes them in memory, and its worker logs when.
	var unmoved time.Duration
	for w, from := range marks {
		if at, ok := w.printedAt(from, fmt.Sprintf(`running: the rescaled tasks took the state of checkpoint %d in memory`, info.Checkpoint)); ok {
			unmoved = at.Sub(t0)
		}
	}
	if unmoved == 0 {
		b.t.Fatalf("no worker took the state of the live rescale in memory")
	}
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		job, err := b.cc.GetJob(context.Background(), &pb.GetJobRequest{Id: id})
		if err != nil {
			b.t.Fatal(err)
		}
		for _, s := range job.Subtasks {
			if s.Subtask.GetSubtask() >= 2 && (s.RecordsOut > 0 || s.RecordsWritten > 0) {
				pause := time.Since(t0)
				b.cc.CancelJob(context.Background(), &pb.GetJobRequest{Id: id})
				return pause, time.Duration(info.StopNs), unmoved
			}
		}
	}
	b.t.Fatalf("no new subtask of job %s wrote in 5 minutes", id)
	return 0, 0, 0
}

// manual measures a stop with a savepoint and a submission from it at
// parallelism 4; it returns the pause and the savepoint's size.
func (b *pauseBench) manual() (time.Duration, int64) {
	id, args := b.submit()
	t0 := time.Now()
	sp, err := b.cc.Savepoint(context.Background(), &pb.SavepointRequest{Id: id, Dir: filepath.Join(b.c.dir, "savepoints"), Stop: true})
	if err != nil {
		b.t.Fatal(err)
	}
	for { // the stop ends the job once its sinks committed the savepoint
		info, err := b.cc.GetJob(context.Background(), &pb.GetJobRequest{Id: id})
		if err != nil {
			b.t.Fatal(err)
		}
		if info.State == cluster.Stopped {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	args = append(args, "-p", "4", "--restore", sp.Path) // the same output: the sink's transactions are there
	info, err := b.cc.Submit(context.Background(), &pb.SubmitRequest{Job: "largestate", Args: args})
	if err != nil {
		b.t.Fatal(err)
	}
	pause := b.firstWrite(info.Id).Sub(t0)
	b.cc.CancelJob(context.Background(), &pb.GetJobRequest{Id: info.Id})
	return pause, sp.Bytes
}

func median(ds []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	return s[len(s)/2].Round(time.Millisecond)
}

func spread(ds []time.Duration) string {
	return fmt.Sprintf("%v–%v", slices.Min(ds).Round(time.Millisecond), slices.Max(ds).Round(time.Millisecond))
}
