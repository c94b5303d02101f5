package cluster_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weir-stream/weir/connectors/file"
	"github.com/weir-stream/weir/internal/cluster"
	"github.com/weir-stream/weir/internal/cluster/pb"
)

func TestMain(m *testing.M) {
	if store := os.Getenv(simStoreEnv); store != "" {
		os.Exit(simCoordinatorMain(store)) // a simulation's coordinator process (coordsim_proc_test.go)
	}
	goleak.VerifyTestMain(m)
}

// logLines collects the lines a coordinator and its jobs log, so that a
// test waits for an event instead of polling.
type logLines struct {
	mu    sync.Mutex
	lines []string
	added chan struct{} // closed and replaced on every line
	// stall is closed when a job reported that it stalled (stalled);
	// stallReport is its report and the goroutines' stacks then.
	stall       chan struct{}
	stallReport string
}

func newLogLines() *logLines {
	return &logLines{added: make(chan struct{}), stall: make(chan struct{})}
}

// stalled takes a job's report that it made no progress (the stall
// timeout's callback) as the end of the test: every wait fails at once
// with the report and the stacks of all goroutines, taken now, while the
// job still waits.
func (l *logLines) stalled(report string) {
	stacks := cluster.AllStacks()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stallReport != "" {
		return
	}
	l.stallReport = report + "\ngoroutines when it stalled:\n" + stacks
	close(l.stall)
}

func (l *logLines) add(line string) {
	if os.Getenv("WEIR_TEST_LOGS") != "" {
		fmt.Fprintln(os.Stderr, line)
	}
	l.mu.Lock()
	l.lines = append(l.lines, line)
	close(l.added)
	l.added = make(chan struct{})
	l.mu.Unlock()
}

// dumpOnFailure makes t log every line logged, once it ends failed: the
// story of the cluster and its jobs that a wrong output came from.
func (l *logLines) dumpOnFailure(t testing.TB) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		t.Logf("the cluster's log (%d lines):\n%s", len(l.lines), strings.Join(l.lines, "\n"))
	})
}

// wait waits until a line matching re was logged.
func (l *logLines) wait(t testing.TB, re string) {
	t.Helper()
	l.waitCount(t, re, 1)
}

// waitCount waits until n lines matching re were logged. It fails the
// test with the stacks of all goroutines when that takes more than a
// minute, and at once when a job reported a stall (stalled).
func (l *logLines) waitCount(t testing.TB, re string, n int) {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.After(time.Minute)
	for i := 0; ; {
		l.mu.Lock()
		for ; i < len(l.lines); i++ {
			if rx.MatchString(l.lines[i]) {
				if n--; n == 0 {
					l.mu.Unlock()
					return
				}
			}
		}
		added := l.added
		l.mu.Unlock()
		select {
		case <-added:
		case <-l.stall:
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Fatalf("a job stalled while waiting for %q:\n%s\n\nlog:\n%s", re, l.stallReport, strings.Join(l.lines, "\n"))
		case <-deadline:
			stacks := cluster.AllStacks()
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Fatalf("nothing logged %q within a minute:\n%s\n\ngoroutines:\n%s", re, strings.Join(l.lines, "\n"), stacks)
		}
	}
}

// waitMatch waits until a line matching re was logged after the first
// skip ones and returns its submatches.
func (l *logLines) waitMatch(t *testing.T, re string) []string {
	t.Helper()
	l.wait(t, re)
	rx := regexp.MustCompile(re)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if m := rx.FindStringSubmatch(line); m != nil {
			return m
		}
	}
	return nil
}

// count returns how many lines logged so far match re.
func (l *logLines) count(re string) int {
	rx := regexp.MustCompile(re)
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if rx.MatchString(line) {
			n++
		}
	}
	return n
}

// runningWorker is a worker of a test cluster in this process.
type runningWorker struct {
	w      *cluster.Worker
	cancel context.CancelFunc
	done   chan error
}

// stop ends the worker's session and data plane: to the coordinator and
// the other workers it is lost.
func (r *runningWorker) stop() {
	r.cancel()
	<-r.done
	r.w.Close()
}

func startWorker(t testing.TB, ctx context.Context, cfg cluster.WorkerConfig) *runningWorker {
	t.Helper()
	w, err := cluster.NewWorker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	r := &runningWorker{w, cancel, make(chan error, 1)}
	go func() { r.done <- w.Run(wctx) }()
	return r
}

// dial returns a client of the coordinator at addr, closed when the test
// ends.
func dial(t testing.TB, addr string) pb.CoordinatorClient {
	t.Helper()
	conn, err := cluster.Security{}.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pb.NewCoordinatorClient(conn)
}

// awaitFinished waits until job id ended and fails the test unless it
// finished; it returns the job's final info.
func awaitFinished(t *testing.T, ctx context.Context, client pb.CoordinatorClient, logs *logLines, id string) *pb.JobInfo {
	t.Helper()
	logs.wait(t, "^([a-z]+: )?job "+id+" (finished|failed|cancelled)")
	info, err := client.GetJob(ctx, &pb.GetJobRequest{Id: id})
	if err != nil {
		t.Fatal(err)
	}
	if info.State != cluster.Finished {
		t.Fatalf("job %s: %s", info.State, info.Error)
	}
	return info
}

// sameOutput fails the test unless the file sink directories out and ref
// hold the same lines, in any order, and names the lines missing.
func sameOutput(t *testing.T, out, ref string) {
	t.Helper()
	got, err := file.ReadLines(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := file.ReadLines(ref)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if slices.Equal(got, want) {
		return
	}
	seen := map[string]int{}
	for _, g := range got {
		seen[g]++
	}
	var missing, extra []string
	for _, w := range want {
		if seen[w] == 0 {
			missing = append(missing, w)
		}
		seen[w]--
	}
	for _, g := range got {
		if seen[g] > 0 {
			extra = append(extra, g)
			seen[g]--
		}
	}
	t.Fatalf("%s: %d rows, want the one-process run's %d; missing %d: %.20v; not in it %d: %.20v", out, len(got), len(want), len(missing), missing, len(extra), extra)
}
