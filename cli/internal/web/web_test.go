package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/connectors/generator"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// knownJob runs 10,000 numbers through a filter keeping the even ones and
// a keyed count into a sink, exactly-once with checkpoints.
func knownJob(t *testing.T) *weir.Pipeline {
	t.Helper()
	p := weir.NewPipeline(weir.WithName("known"), weir.WithParallelism(2), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 10 * time.Millisecond}))
	src := weir.FromSource(p, "numbers", generator.Sequence(0, 10_000))
	even := weir.Filter(src, func(v int64) bool { return v%2 == 0 })
	keyed := weir.KeyBy(even, func(v int64) int64 { return v % 10 })
	out := weir.Process(keyed, func() weir.KeyedProcessFunction[int64, int64, int64] {
		return weir.ProcessFunc[int64, int64, int64](func(ctx *weir.KeyedContext[int64, int64], v int64) error {
			ctx.Emit(v)
			return nil
		})
	}, weir.Name("pass"))
	sink := collection.NewSink[int64]()
	weir.To(out, "sink", idempotent{sink})
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return p
}

// idempotent marks the in-memory sink as safe for exactly-once in a test
// whose job never fails.
type idempotent struct{ *collection.Sink[int64] }

func (idempotent) Idempotent() bool { return true }

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

func TestMetricsOfAKnownJob(t *testing.T) {
	p := knownJob(t)
	s := NewServer(p)
	code, body := get(t, s, "/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	// The source task read 10,000 numbers over its two subtasks; the sink
	// wrote the 5,000 even ones.
	sum := func(metric, task string) float64 {
		var total float64
		for _, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, metric+"{") && strings.Contains(line, `task="`+task+`"`) {
				var v float64
				f := strings.Fields(line)
				json.Unmarshal([]byte(f[len(f)-1]), &v)
				total += v
			}
		}
		return total
	}
	if got := sum("weir_task_records_in_total", "numbers -> filter"); got != 10_000 {
		t.Errorf("records in of the source task: %v, want 10000\n%s", got, body)
	}
	if got := sum("weir_task_records_out_total", "numbers -> filter"); got != 5_000 {
		t.Errorf("records out of the source task: %v, want 5000", got)
	}
	if got := sum("weir_sink_records_written_total", "pass -> sink"); got != 5_000 {
		t.Errorf("records written: %v, want 5000", got)
	}
	if !strings.Contains(body, `weir_checkpoints_total{job="known",status="completed"}`) {
		t.Errorf("no checkpoint count in\n%s", body)
	}
	if !strings.Contains(body, `weir_job_running{job="known"} 0`) {
		t.Errorf("the finished job is not reported as stopped")
	}
}

func TestAPI(t *testing.T) {
	p := knownJob(t)
	s := NewServer(p)
	code, body := get(t, s, "/api/v1/jobs")
	var jobs []JobInfo
	if err := json.Unmarshal([]byte(body), &jobs); err != nil || code != 200 {
		t.Fatalf("/api/v1/jobs: %d %v\n%s", code, err, body)
	}
	if len(jobs) != 1 || jobs[0].Name != "known" || jobs[0].State != "finished" || jobs[0].Guarantee != "exactly-once" {
		t.Fatalf("jobs: %+v", jobs)
	}
	_, body = get(t, s, "/api/v1/jobs/known/tasks")
	var tasks []weir.TaskMetrics
	if err := json.Unmarshal([]byte(body), &tasks); err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 2 || tasks[0].RecordsIn != 10_000 || len(tasks[0].Subtasks) != 2 {
		t.Fatalf("tasks: %+v", tasks)
	}
	_, body = get(t, s, "/api/v1/jobs/known/checkpoints")
	var cks []weir.CheckpointStats
	if err := json.Unmarshal([]byte(body), &cks); err != nil || len(cks) == 0 || cks[len(cks)-1].Status != "completed" {
		t.Fatalf("checkpoints: %v %s", err, body)
	}
	if code, _ := get(t, s, "/api/v1/jobs/nope"); code != 404 {
		t.Fatalf("unknown job: %d, want 404", code)
	}
	if _, body := get(t, s, "/api/v1/jobs/known"); !strings.Contains(body, "physical plan") {
		t.Fatalf("job without plan: %s", body)
	}
}

func TestServerStartsAndStops(t *testing.T) {
	s := NewServer()
	url, stop, err := s.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(url + "/api/v1/jobs")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.TrimSpace(string(body)) != "[]" {
		t.Fatalf("got %q", body)
	}
	stop()
}

// With sampled latency tracking, markers reach the keyed task and the
// sink records event-time latency; both appear as Prometheus histograms.
func TestLatencyTracking(t *testing.T) {
	p := weir.NewPipeline(weir.WithName("lat"), weir.WithParallelism(2), weir.WithLatencyTracking(time.Millisecond))
	src := weir.FromSource(p, "numbers", generator.Sequence(0, 200_000, generator.WithRate(1_000_000)),
		weir.WithTimestamps(func(v int64) int64 { return time.Now().UnixMilli() }, 0))
	keyed := weir.KeyBy(src, func(v int64) int64 { return v % 10 })
	out := weir.Process(keyed, func() weir.KeyedProcessFunction[int64, int64, int64] {
		return weir.ProcessFunc[int64, int64, int64](func(ctx *weir.KeyedContext[int64, int64], v int64) error {
			ctx.Emit(v)
			return nil
		})
	}, weir.Name("pass"))
	weir.To(out, "sink", collection.NewSink[int64]())
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var markers, events int64
	for _, tm := range p.Metrics() {
		for _, s := range tm.Subtasks {
			markers += s.Latency.Count()
			events += s.EventTimeLatency.Count()
		}
	}
	if markers == 0 || events != 200_000 {
		t.Fatalf("latency markers recorded %d, event-time latencies %d (want > 0 and 200000)", markers, events)
	}
	_, body := get(t, NewServer(p), "/metrics")
	for _, m := range []string{"weir_task_latency_seconds_bucket", "weir_sink_event_time_latency_seconds_count"} {
		if !strings.Contains(body, m) {
			t.Fatalf("no %s in /metrics", m)
		}
	}
}

type countInts struct{}

func (countInts) Create() int64              { return 0 }
func (countInts) Add(n int64, _ int64) int64 { return n + 1 }
func (countInts) Merge(a, b int64) int64     { return a + b }
func (countInts) Result(n int64) int64       { return n }

// Late records a window drops for want of a side output are counted in
// /metrics and in the API's tasks, as the pipeline counts them.
func TestLateRecordsDroppedAreServed(t *testing.T) {
	p := weir.NewPipeline(weir.WithName("late"), weir.WithParallelism(1), weir.WithWatermarkInterval(time.Nanosecond))
	// Every thousandth number is stamped at time 0, long after the
	// watermark passed its window.
	src := weir.FromSource(p, "numbers", generator.Sequence(0, 20_000), weir.WithTimestamps(func(v int64) int64 {
		if v%1000 == 999 {
			return 0
		}
		return v * 10
	}, 0))
	counts := weir.AggregateWindow(weir.WindowBy(weir.KeyBy(src, func(v int64) int64 { return v % 3 }), weir.Tumbling(time.Second)), countInts{})
	weir.To(counts, "sink", collection.NewSink[weir.Windowed[int64, int64]]())
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, m := range p.Metrics() {
		want += m.LateDropped
	}
	if want == 0 {
		t.Fatal("the job dropped no late record")
	}
	s := NewServer(p)
	_, body := get(t, s, "/metrics")
	var metric float64
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "weir_late_records_dropped_total{") {
			var v float64
			f := strings.Fields(line)
			json.Unmarshal([]byte(f[len(f)-1]), &v)
			metric += v
		}
	}
	if metric != float64(want) {
		t.Errorf("weir_late_records_dropped_total sums to %v, want %d", metric, want)
	}
	_, body = get(t, s, "/api/v1/jobs/late/tasks")
	var tasks []weir.TaskMetrics
	if err := json.Unmarshal([]byte(body), &tasks); err != nil {
		t.Fatal(err)
	}
	var api int64
	for _, tm := range tasks {
		api += tm.LateDropped
	}
	if api != want || !strings.Contains(body, `"late_records_dropped":`) {
		t.Errorf("the API's tasks count %d late records dropped, want %d:\n%s", api, want, body)
	}
}
