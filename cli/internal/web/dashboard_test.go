package web

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
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

// dashboardPrerequisites returns what is missing to run the browser test.
func dashboardPrerequisites() []string {
	var missing []string
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		missing = append(missing, "Chromium at "+chromium+" (Debian/Ubuntu: apt-get install -y chromium; or set CHROMIUM to a Chromium binary)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing = append(missing, "node in PATH (Node.js 18 or newer)")
	}
	if _, err := os.Stat(filepath.Join("uitest", "node_modules", "playwright-core", "package.json")); err != nil {
		missing = append(missing, "playwright-core (run: npm ci --prefix cli/internal/web/uitest)")
	}
	return missing
}

// TestDashboardInABrowser runs a job with one injected failure, serves it,
// and has headless Chromium check that the dashboard draws its tasks, its
// throughput and the failure. It needs Chromium, node and the npm packages
// of uitest; it fails, rather than skips, without them.
func TestDashboardInABrowser(t *testing.T) {
	if missing := dashboardPrerequisites(); len(missing) > 0 {
		t.Fatalf("the browser test needs:\n  %s", strings.Join(missing, "\n  "))
	}
	const (
		rate  = 2_000  // records per second
		count = 20_000 // ten seconds; the test cancels the job once the browser is done
	)
	base := time.Now().UnixMilli()
	p := weir.NewPipeline(weir.WithName("dashboard"), weir.WithParallelism(2), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithLatencyTracking(100*time.Millisecond),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 100 * time.Millisecond}),
		weir.WithInjectedFailures(1, 7), weir.WithFailureWindow(time.Second),
		weir.WithRestartStrategy("fixed-delay", 10, 50*time.Millisecond, 0, 0))
	src := weir.FromSource(p, "numbers", generator.Sequence(0, count, generator.WithRate(rate)),
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
	cctx, ccancel := context.WithTimeout(ctx, 90*time.Second)
	defer ccancel()
	cmd := exec.CommandContext(cctx, "node", filepath.Join("uitest", "check.mjs"), url+"/", strconv.Itoa(tasks), "1", shot)
	out, err := cmd.CombinedOutput()
	t.Logf("check.mjs:\n%s", out)
	if err != nil {
		// t.TempDir goes away with the test: keep the screenshot of the failure.
		kept := filepath.Join(os.TempDir(), "weir-dashboard-failed.png")
		if png, rerr := os.ReadFile(shot); rerr == nil && os.WriteFile(kept, png, 0o644) == nil {
			shot = kept
		}
		t.Errorf("the dashboard check failed (%v); screenshot: %s", err, shot)
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
