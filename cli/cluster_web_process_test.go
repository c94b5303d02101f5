package cli_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	weirapi "github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/cli/internal/web/uitest"
)

// webCluster is a cluster of two one-slot workers whose coordinator
// serves --http, running one keycount job of parallelism 2, submitted
// with weir submit --http; the job runs until the test cancels it.
type webCluster struct {
	*testCluster
	url       string // the coordinator's dashboard
	submitURL string // weir submit --http's
	job       string
	client    *proc
}

func newWebCluster(t *testing.T, jobFlags ...string) *webCluster {
	t.Helper()
	dir := t.TempDir()
	c := &testCluster{t: t, dir: dir, store: filepath.Join(dir, "store"), workers: map[string]*proc{}, replacement: "1m",
		coordFlags: []string{"--http", "127.0.0.1:0", "--savepoint-dir", filepath.Join(dir, "savepoints")}}
	c.startCoordinator("127.0.0.1:0")
	w := &webCluster{testCluster: c, url: c.coord.waitFor(`dashboard at (\S+)/,`)[1]}
	c.startWorker("w1")
	c.startWorker("w2")
	// 100 million events at 20,000 a second: the job runs until cancelled.
	args := append([]string{"submit", "--coordinator", c.addr, "keycount", "--events", "100000000", "--rate", "20000", "--keys", "50",
		"--window", "100ms", "-p", "2", "--output", filepath.Join(dir, "out"), "--guarantee", "exactly-once",
		"--checkpoint-interval", "200ms", "--http", "127.0.0.1:0"}, jobFlags...)
	w.client = start(t, "submit", args...)
	m := w.client.waitFor(`dashboard of job (\S+) at (\S+)/,`)
	w.job, w.submitURL = m[1], m[2]
	return w
}

// cancel cancels the job and waits for weir submit to end with it.
func (w *webCluster) cancel() {
	w.t.Helper()
	if code, _, stderr := weir(w.t, "cancel", "--coordinator", w.addr, w.job); code != 0 {
		w.t.Fatalf("weir cancel: %d\n%s", code, stderr)
	}
	if err := w.client.wait(); err == nil || !strings.Contains(w.client.output(), "was cancelled") {
		w.t.Errorf("weir submit --http of a cancelled job: %v\n%s", err, w.client.output())
	}
}

// noKeepAlive leaves no connection behind for goleak to find.
var noKeepAlive = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := noKeepAlive.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v\n%s", url, resp.Status, err, body)
	}
	return string(body)
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(httpGet(t, url)), v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// awaitAPI asks the API at url until ok holds of what it answers: until
// the workers' heartbeats brought it, with a hang guard of minutes.
func awaitAPI[T any](t *testing.T, url, what string, ok func(T) bool) T {
	t.Helper()
	guard := time.Now().Add(3 * time.Minute)
	for {
		var v T
		getJSON(t, url, &v)
		if ok(v) {
			return v
		}
		if time.Now().After(guard) {
			t.Fatalf("%s never came: the last answer of %s was %+v", what, url, v)
		}
		time.Sleep(100 * time.Millisecond) // the heartbeat interval
	}
}

// metricValue returns the value of the sample of metric whose labels
// include every one of labels, and whether there is one.
func metricValue(body, metric string, labels ...string) (float64, bool) {
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, metric+"{") && !strings.HasPrefix(line, metric+" ") {
			continue
		}
		all := true
		for _, l := range labels {
			all = all && strings.Contains(line, l)
		}
		if f := strings.Fields(line); all && len(f) == 2 {
			v, err := strconv.ParseFloat(f[1], 64)
			return v, err == nil
		}
	}
	return 0, false
}

// A coordinator started with --http serves the jobs of its cluster: the
// job list, the job with its plan, its tasks with the worker of each
// subtask and the counters the workers' heartbeats report, its
// checkpoints; /metrics labels the subtasks' metrics with their worker
// and adds the coordinator's own; a savepoint posted to it is the
// coordinator's. weir submit --http serves the same job from the
// coordinator's control plane.
func TestCoordinatorServesTheClustersJobs(t *testing.T) {
	clusterTest(t)
	w := newWebCluster(t)

	var jobs []struct {
		Name, State string
	}
	getJSON(t, w.url+"/api/v1/jobs", &jobs)
	if len(jobs) != 1 || jobs[0].Name != w.job {
		t.Fatalf("/api/v1/jobs: %+v, want job %s", jobs, w.job)
	}
	var job struct {
		Name, State, Guarantee, Plan string
	}
	getJSON(t, w.url+"/api/v1/jobs/"+w.job, &job)
	if job.Guarantee != "exactly-once" || !strings.Contains(job.Plan, "task 0 [parallelism 2]") {
		t.Fatalf("/api/v1/jobs/%s: %+v", w.job, job)
	}

	// Once records flowed through every subtask and watermarks through the
	// tasks with inputs, every subtask says where it runs and what holds
	// its watermark back.
	tasks := awaitAPI(t, w.url+"/api/v1/jobs/"+w.job+"/tasks", "records and watermarks through every subtask", func(ts []weirapi.TaskMetrics) bool {
		for i, task := range ts {
			for _, s := range task.Subtasks {
				if s.RecordsIn == 0 || s.Worker == "" || (i > 0 && (s.Watermark == weirapi.MinWatermark || s.WatermarkHeldBackBy == "")) {
					return false
				}
			}
		}
		return len(ts) > 1
	})
	workers := map[string]bool{}
	for _, task := range tasks {
		for _, s := range task.Subtasks {
			workers[s.Worker] = true
			if s.Busy+s.Idle+s.Backpressured == 0 {
				t.Errorf("task %s: a subtask on %s reports no busy, idle or backpressured time", task.Name, s.Worker)
			}
		}
	}
	if !workers["w1"] || !workers["w2"] || len(workers) != 2 {
		t.Errorf("the subtasks run on %v, want w1 and w2", workers)
	}
	held := tasks[len(tasks)-1].Subtasks[0].WatermarkHeldBackBy
	if !regexp.MustCompile(`^.+ \[subtask [01]\]$`).MatchString(held) {
		t.Errorf("the last task's watermark is held back by %q, want a task and subtask", held)
	}
	awaitAPI(t, w.url+"/api/v1/jobs/"+w.job+"/checkpoints", "a completed checkpoint", func(cs []weirapi.CheckpointStats) bool {
		return len(cs) > 0 && cs[len(cs)-1].Status == "completed"
	})

	metrics := httpGet(t, w.url+"/metrics")
	source := tasks[0].Name
	for _, worker := range []string{"w1", "w2"} {
		labels := []string{`job="` + w.job + `"`, `task="` + source + `"`, `worker="` + worker + `"`}
		if v, ok := metricValue(metrics, "weir_task_records_in_total", labels...); !ok || v == 0 {
			t.Errorf("weir_task_records_in_total of %s on %s: %v (present: %v), want above 0", source, worker, v, ok)
		}
	}
	for _, want := range []struct {
		metric string
		labels []string
		value  float64
	}{
		{"weir_coordinator_workers", nil, 2},
		{"weir_coordinator_slots", nil, 2},
		{"weir_coordinator_slots_used", nil, 2},
		{"weir_coordinator_epoch", nil, 1},
		{"weir_coordinator_leading", nil, 1},
		{"weir_coordinator_jobs", []string{`state="running"`}, 1},
		{"weir_coordinator_jobs", []string{`state="failed"`}, 0},
		{"weir_job_running", []string{`job="` + w.job + `"`}, 1},
	} {
		if v, ok := metricValue(metrics, want.metric, want.labels...); !ok || v != want.value {
			t.Errorf("%s%v: %v (present: %v), want %v", want.metric, want.labels, v, ok, want.value)
		}
	}
	if v, ok := metricValue(metrics, "weir_checkpoints_total", `job="`+w.job+`"`, `status="completed"`); !ok || v == 0 {
		t.Errorf("weir_checkpoints_total completed: %v (present: %v), want above 0", v, ok)
	}

	// weir status reads the coordinator's API as a job's.
	if code, stdout, stderr := weir(t, "status", "--http", w.url, w.job); code != 0 || !strings.Contains(stdout, source) {
		t.Errorf("weir status --http %s %s: %d\n%s%s", w.url, w.job, code, stdout, stderr)
	}

	// weir submit --http serves the same job, read from the coordinator.
	var submitted []struct{ Name string }
	getJSON(t, w.submitURL+"/api/v1/jobs", &submitted)
	if len(submitted) != 1 || submitted[0].Name != w.job {
		t.Errorf("weir submit --http lists %+v, want job %s", submitted, w.job)
	}
	sm := httpGet(t, w.submitURL+"/metrics")
	if v, ok := metricValue(sm, "weir_task_records_in_total", `job="`+w.job+`"`, `worker="w1"`); !ok || v == 0 {
		t.Errorf("weir submit --http: weir_task_records_in_total on w1: %v (present: %v)", v, ok)
	}
	if strings.Contains(sm, "weir_coordinator_workers") {
		t.Error("weir submit --http exports the coordinator's metrics; the coordinator does")
	}

	// A savepoint through the coordinator's HTTP API is the coordinator's,
	// into its --savepoint-dir; weir savepoint --http names the job.
	code, stdout, stderr := weir(t, "savepoint", "--http", w.url)
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(stdout), filepath.Join(w.dir, "savepoints")) {
		t.Errorf("weir savepoint --http %s: %d %q\n%s", w.url, code, stdout, stderr)
	}
	resp, err := noKeepAlive.Post(w.url+"/api/v1/savepoints", "application/json", strings.NewReader(`{"job": "nosuchjob"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), `no job named \"nosuchjob\"`) {
		t.Errorf("a savepoint of an unknown job: %s %s", resp.Status, body)
	}
	if !strings.Contains(w.coord.output(), fmt.Sprintf("job %s: savepoint of checkpoint", w.job)) {
		t.Errorf("the coordinator did not log the savepoint:\n%s", w.coord.output())
	}
	w.cancel()
}

// The coordinator's dashboard, in headless Chromium, shows a cluster's
// job as weir run's shows its own: the job listed, its two tasks with
// throughput, latency percentiles and its checkpoints. Like the
// dashboard's own browser test (cli/internal/web) it needs Chromium, node
// and the npm packages of cli/internal/web/uitest, and fails without them.
func TestCoordinatorDashboardInABrowser(t *testing.T) {
	skipShort(t)
	if missing := uitest.Missing(); len(missing) > 0 {
		t.Fatalf("the browser test needs:\n  %s", strings.Join(missing, "\n  "))
	}
	w := newWebCluster(t, "--latency-tracking", "sampled")
	shot := filepath.Join(t.TempDir(), "coordinator-dashboard.png")
	out, err := uitest.Check(uitest.HangGuard(t), w.url+"/", "2", "0", shot)
	t.Logf("check.mjs:\n%s", out)
	if err != nil {
		t.Errorf("the coordinator's dashboard check failed (%v)\ncoordinator:\n%s\nsubmit:\n%s", err, w.coord.output(), w.client.output())
	}
	w.cancel()
}

// weir submit --http with an address it cannot listen on is a usage
// error before anything is submitted: no coordinator is asked.
func TestSubmitRefusesABadHTTPAddressBeforeSubmitting(t *testing.T) {
	code, stdout, stderr := weir(t, "submit", "--coordinator", "127.0.0.1:1", "keycount", "--http", "256.0.0.1:99999")
	if code != cli.ExitUsage || !strings.Contains(stderr, "--http") || strings.Contains(stderr, "coordinator 127.0.0.1:1") || stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want a usage error about --http", code, stdout, stderr)
	}
}

// Under --ha each coordinator serves its own dashboard: the leader's
// shows the job and weir_coordinator_leading 1, the standby's no job and
// 0; after a handover the new leader's shows the job it adopted, and the
// old leader's, a standby again, none.
func TestEachHACoordinatorServesItsDashboard(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	startHA := func(name string) (p *proc, addr, url string) {
		p = start(t, name, "coordinator", "--ha", "--listen", "127.0.0.1:0", "--checkpoint-store", store, "--lease-period", "1s",
			"--heartbeat-timeout", "1s", "--heartbeat-interval", "100ms", "--http", "127.0.0.1:0")
		return p, p.waitFor(`listening on (\S+) `)[1], p.waitFor(`dashboard at (\S+)/,`)[1]
	}
	a, addrA, urlA := startHA("coordinator-a")
	a.waitFor(`leading the store .* with epoch 1`)
	b, addrB, urlB := startHA("coordinator-b")
	b.waitFor(`the leader \(epoch 1\) serves at ` + regexp.QuoteMeta(addrA))
	addrs := addrA + "," + addrB
	for _, id := range []string{"w1", "w2"} {
		start(t, id, "worker", "--coordinator", addrs, "--slots", "1", "--id", id).waitFor("joined coordinator")
	}
	code, stdout, stderr := weir(t, "submit", "--coordinator", addrs, "keycount", "--events", "100000000", "--rate", "20000", "-p", "2",
		"--output", filepath.Join(dir, "out"), "--guarantee", "exactly-once", "--checkpoint-interval", "200ms")
	if code != 0 {
		t.Fatalf("weir submit: %d\n%s", code, stderr)
	}
	job := strings.TrimSpace(stdout)

	// leading says what url's /metrics says of the lead, jobs the jobs it
	// lists.
	leading := func(url string) float64 {
		v, _ := metricValue(httpGet(t, url+"/metrics"), "weir_coordinator_leading")
		return v
	}
	jobs := func(url string) int {
		var js []struct{ Name string }
		getJSON(t, url+"/api/v1/jobs", &js)
		return len(js)
	}
	running := func(ts []weirapi.TaskMetrics) bool {
		return len(ts) > 0 && ts[0].RecordsIn > 0 && ts[0].Subtasks[0].Worker != ""
	}
	awaitAPI(t, urlA+"/api/v1/jobs/"+job+"/tasks", "records through the leader's job", running)
	if leading(urlA) != 1 || leading(urlB) != 0 || jobs(urlB) != 0 {
		t.Errorf("before the handover: a leading %v, b leading %v with %d jobs; want 1, 0 and 0", leading(urlA), leading(urlB), jobs(urlB))
	}

	if code, _, stderr := weir(t, "coordinator", "handover", "--coordinator", addrs); code != 0 {
		t.Fatalf("weir coordinator handover: %d\n%s", code, stderr)
	}
	b.waitFor(`job ` + job + `: adopting its running attempt`)
	a.waitFor(`the leader \(epoch 2\) serves at`)
	awaitAPI(t, urlB+"/api/v1/jobs/"+job+"/tasks", "records through the adopted job", running)
	if leading(urlB) != 1 || leading(urlA) != 0 || jobs(urlA) != 0 {
		t.Errorf("after the handover: b leading %v, a leading %v with %d jobs; want 1, 0 and 0", leading(urlB), leading(urlA), jobs(urlA))
	}
	if code, _, stderr := weir(t, "cancel", "--coordinator", addrs, job); code != 0 {
		t.Errorf("weir cancel: %d\n%s", code, stderr)
	}
}
