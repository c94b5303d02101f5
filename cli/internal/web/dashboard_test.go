package web

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli/internal/web/uitest"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/weirtest"
)

func TestDashboardServesItsFiles(t *testing.T) {
	s := NewServer()
	for path, want := range map[string]string{
		"/":                  `id="throughput"`,
		"/dashboard.js":      "parsePlan",
		"/dashboard.css":     ".task",
		"/uPlot.iife.min.js": "uPlot",
		"/uPlot.min.css":     ".uplot",
		"/uPlot.LICENSE":     "MIT License",
	} {
		code, body := get(t, s, path)
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d, body without %q", path, code, want)
		}
	}
	if code, _ := get(t, s, "/nope.js"); code != 404 {
		t.Errorf("GET /nope.js: %d, want 404", code)
	}
	if code, _ := get(t, s, "/api/v1/jobs"); code != 200 {
		t.Errorf("the dashboard shadows the API: %d", code)
	}
}

// TestDashboardInABrowser runs a job with one injected failure, serves it,
// and has headless Chromium check that the dashboard draws its tasks, its
// throughput and the failure. It needs Chromium, node and the npm packages
// of uitest; it fails, rather than skips, without them.
//
// The job runs until the browser is done, however long Chromium takes to
// start on a loaded machine: a job that ended first would leave every
// throughput at 0 for the page to see. The browser's checks wait for what
// the page shows, bounded only by a hang guard of minutes; a check that
// runs out of it fails with what it waited for, what the page showed, the
// job's log and the goroutines of the job.
func TestDashboardInABrowser(t *testing.T) {
	if missing := uitest.Missing(); len(missing) > 0 {
		t.Fatalf("the browser test needs:\n  %s", strings.Join(missing, "\n  "))
	}
	const rate = 2_000 // records per second
	var logMu sync.Mutex
	var jobLog strings.Builder
	base := time.Now().UnixMilli()
	p := weir.NewPipeline(weir.WithName("dashboard"), weir.WithParallelism(2), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithLatencyTracking(100*time.Millisecond),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 100 * time.Millisecond}),
		weir.WithInjectedFailures(1, 7), weir.WithFailureWindow(time.Second),
		weir.WithRestartStrategy("fixed-delay", 10, 50*time.Millisecond, 0, 0),
		weir.WithLog(func(line string) {
			logMu.Lock()
			defer logMu.Unlock()
			fmt.Fprintf(&jobLog, "%s %s\n", time.Now().Format("15:04:05.000"), line)
		}))
	// Unbounded: the test cancels the job once the browser is done.
	src := weir.FromSource(p, "numbers", generator.Sequence(0, math.MaxInt64, generator.WithRate(rate)),
		weir.WithTimestamps(func(v int64) int64 { return base + v*1000/rate }, 200*time.Millisecond))
	even := weir.Filter(src, func(v int64) bool { return v%2 == 0 })
	pass := func(name string, in weir.Stream[int64]) weir.Stream[int64] {
		return weir.Process(weir.KeyBy(in, func(v int64) int64 { return v % 16 }), func() weir.KeyedProcessFunction[int64, int64, int64] {
			return weir.ProcessFunc[int64, int64, int64](func(ctx *weir.KeyedContext[int64, int64], v int64) error {
				ctx.Emit(v)
				return nil
			})
		}, weir.Name(name))
	}
	weir.To(pass("count", pass("pass", even)), "sink", weirtest.NewSink[int64]())
	const tasks = 3 // numbers -> filter, pass, count -> sink

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- p.Run(ctx) }()
	url, stop, err := NewServer(p).Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	shot := filepath.Join(t.TempDir(), "dashboard.png")
	out, err := uitest.Check(uitest.HangGuard(t), url+"/", strconv.Itoa(tasks), "1", shot)
	t.Logf("check.mjs:\n%s", out)
	if err != nil {
		// t.TempDir goes away with the test: keep the screenshot of the failure.
		kept := filepath.Join(os.TempDir(), "weir-dashboard-failed.png")
		if png, rerr := os.ReadFile(shot); rerr == nil && os.WriteFile(kept, png, 0o644) == nil {
			shot = kept
		}
		logMu.Lock()
		log := jobLog.String()
		logMu.Unlock()
		t.Errorf("the dashboard check failed (%v); screenshot: %s\njob state: %s\njob log:\n%s\ngoroutines:\n%s",
			err, shot, p.Status().State, log, goroutines())
	}

	cancel()
	if err := <-runErr; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("job: %v", err)
	}
	stop()
	if rep := p.Report(); rep == nil || len(rep.Recoveries) == 0 {
		t.Errorf("the job did not recover from a failure: %+v", rep)
	}
	if os.Getenv("WEIR_UPDATE_SCREENSHOT") == "1" && !t.Failed() {
		png, err := os.ReadFile(shot)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "dashboard.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// goroutines returns the stacks of every goroutine, with what each waits on.
func goroutines() string {
	var b strings.Builder
	if err := pprof.Lookup("goroutine").WriteTo(&b, 2); err != nil {
		return "no stacks: " + err.Error()
	}
	return b.String()
}
