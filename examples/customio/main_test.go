package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
)

// writeLog writes an access log of segments 1.log ... 6.log, with a blank
// line and a malformed one among the views, and returns the view count of
// every page, counted by brute force.
func writeLog(t *testing.T, dir string) map[string]string {
	t.Helper()
	users := []string{"ann", "bob", "cyd"}
	pages := []string{"/", "/home", "/cart", "/checkout", "/help", "/a b"}
	counts := map[string]int{}
	for seg := 1; seg <= 6; seg++ {
		var b strings.Builder
		for i := range 4000 {
			page := pages[(seg*7+i*i)%len(pages)]
			if strings.Contains(page, " ") {
				fmt.Fprintln(&b, "2024-05-01T10:00:00Z", users[i%3], page) // four fields: malformed
				continue
			}
			fmt.Fprintf(&b, "2024-05-01T10:%02d:%02dZ %s %s\n", seg, i%60, users[i%3], page)
			counts[page]++
			if i == 100 {
				b.WriteString("\n")
			}
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.log", seg)), []byte(b.String()), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{}
	for page, n := range counts {
		want[page] = strconv.Itoa(n)
	}
	return want
}

// runJob runs the job on the log in logDir into a fresh store and returns
// the store and the number of failures injected.
func runJob(t *testing.T, logDir string, opts ...weir.Option) (map[string]string, int) {
	t.Helper()
	store := filepath.Join(t.TempDir(), "store")
	p := weir.NewPipeline(opts...)
	build(p, SegmentSource(logDir, false), KVSink(store))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := ReadStore(store)
	if err != nil {
		t.Fatal(err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(store, ".txn-*"))
	if len(leftovers) > 0 {
		t.Errorf("transaction files left in the store after the run: %v", leftovers)
	}
	return got, p.Report().Injected
}

// The job counts every page's views exactly-once: the store after a run
// with injected failures (tasks killed at random moments and at points of
// the checkpoint protocol, the job restored from its latest checkpoint)
// equals the failure-free run's, which equals the count by brute force.
func TestPageViewsExactlyOnceUnderFailures(t *testing.T) {
	logDir := t.TempDir()
	want := writeLog(t, logDir)
	base := append(exactlyOnce(2*time.Millisecond, ""), weir.WithParallelism(2))

	clean, _ := runJob(t, logDir, base...)
	if !maps.Equal(clean, want) {
		t.Fatalf("failure-free run: store = %v, want %v", clean, want)
	}
	injected := 0
	for seed := uint64(1); seed <= 20 && injected < 4; seed++ {
		got, n := runJob(t, logDir, append(base, weir.WithInjectedFailures(2, seed),
			weir.WithFailureWindow(10*time.Millisecond),
			weir.WithRestartStrategy("fixed-delay", 100, time.Millisecond, 0, 0))...)
		if !maps.Equal(got, clean) {
			t.Fatalf("seed %d, %d failures injected: store = %v, want the failure-free run's %v", seed, n, got, clean)
		}
		t.Logf("seed %d: %d failures injected, store as without failures", seed, n)
		injected += n
	}
	if injected == 0 {
		t.Fatal("no failure was injected: the exactly-once run proved nothing")
	}
}

// The command line runs the same job.
func TestCommandLine(t *testing.T) {
	dir := t.TempDir()
	logDir, store, state := filepath.Join(dir, "log"), filepath.Join(dir, "store"), filepath.Join(dir, "state")
	if err := os.Mkdir(logDir, 0o777); err != nil {
		t.Fatal(err)
	}
	writeSegments(t, logDir, map[string]string{"1.log": "t ann /home\nt bob /home\nt ann /cart\n"})
	args := []string{"--log", logDir, "--store", store, "--state-dir", state, "--checkpoint-interval", "10ms"}
	var stderr bytes.Buffer
	if err := run(context.Background(), args, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if got, want := readBack(t, store), []Entry{{"/cart", "1"}, {"/home", "2"}}; !equalEntries(got, want) {
		t.Fatalf("store = %v, want %v", got, want)
	}

	if err := run(context.Background(), []string{"--log", logDir}, &stderr); err == nil || !strings.Contains(err.Error(), "--store") {
		t.Fatalf("run without --store: %v, want an error naming it", err)
	}
}

func equalEntries(a, b []Entry) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}
