package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/weirtest"
)

// rescaleJob is a job whose live rescales are answered by fn.
type rescaleJob struct {
	Job
	report *weir.Report
	fn     func(map[string]int) (weir.LiveRescale, error)
}

func (j rescaleJob) Rescale(_ context.Context, p map[string]int) (weir.LiveRescale, error) {
	return j.fn(p)
}

func (j rescaleJob) Report() *weir.Report { return j.report }

// POST /api/v1/rescale passes the request's parallelism to the job and
// answers the rescale with the report's entries of its checkpoint.
func TestRescaleRequestReachesTheJobAndAnswersTheRescale(t *testing.T) {
	var got map[string]int
	job := rescaleJob{Job: weir.NewPipeline(weir.WithName("j")),
		report: &weir.Report{Rescales: []weir.Rescale{
			{Task: "other", Live: true, From: 1, To: 2, Checkpoint: 3},
			{Task: "count", Live: true, From: 2, To: 3, Checkpoint: 7},
		}},
		fn: func(p map[string]int) (weir.LiveRescale, error) {
			got = p
			return weir.LiveRescale{Checkpoint: 7, Replaced: 5, Pause: 40 * time.Millisecond}, nil
		}}
	code, body := post(t, NewServer(job), "/api/v1/rescale", `{"parallelism": {"count": 3}, "job": "j"}`)
	if code != 200 || !maps.Equal(got, map[string]int{"count": 3}) {
		t.Fatalf("%d %s, the job got %v", code, body, got)
	}
	var a RescaleAnswer
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatal(err)
	}
	if a.Checkpoint != 7 || a.Replaced != 5 || a.Pause != 40*time.Millisecond || len(a.Tasks) != 1 || a.Tasks[0].Task != "count" {
		t.Fatalf("answer %+v", a)
	}
}

// A malformed request or one naming no operator is a 400, as is one the
// job finds wrong in itself; no job to ask is a 404; a job that cannot
// rescale live or does not run answers 409; an aborted rescale 500; each
// with its message.
func TestRescaleRequestErrorsHaveTheirStatusAndMessage(t *testing.T) {
	failing := func(err error) *Server {
		return NewServer(rescaleJob{Job: weir.NewPipeline(weir.WithName("j")), fn: func(map[string]int) (weir.LiveRescale, error) {
			return weir.LiveRescale{}, err
		}})
	}
	one := `{"parallelism": {"count": 3}}`
	for _, c := range []struct {
		s       *Server
		body    string
		code    int
		message string
		what    string
	}{
		{failing(nil), `{"parallelism": `, 400, "no rescale request", "a malformed body"},
		{failing(nil), `{}`, 400, "names no operator", "no operator"},
		{failing(fmt.Errorf("%w: no operator named x", weir.ErrInvalidRescale)), one, 400, "no operator named x", "an unknown operator"},
		{NewServer(), one, 404, "no single job that rescales live", "no job"},
		{failing(nil), `{"parallelism": {"count": 3}, "job": "other"}`, 404, `no job named \"other\"`, "another job's name"},
		{failing(fmt.Errorf("%w: source %q", weir.ErrNotLive, "events")), one, 409, "cannot change parallelism while it runs", "a source"},
		{failing(weir.ErrNotRunning), one, 409, weir.ErrNotRunning.Error(), "a job not running"},
		{failing(errors.New("the live rescale's checkpoint 4 was aborted")), one, 500, "checkpoint 4 was aborted", "an aborted checkpoint"},
	} {
		code, body := post(t, c.s, "/api/v1/rescale", c.body)
		if code != c.code || !strings.Contains(body, c.message) {
			t.Errorf("%s: %d %s, want %d saying %q", c.what, code, body, c.code, c.message)
		}
	}
}

// A running pipeline rescaled through the API shows the rescaled task at
// its new parallelism in /api/v1/jobs/{job}/tasks and in /metrics, and
// the rescale in /api/v1/jobs/{job}/changes.
func TestARunningPipelineRescaledThroughTheAPIShowsItsNewSubtasks(t *testing.T) {
	p := weir.NewPipeline(weir.WithName("live"), weir.WithParallelism(2), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithCheckpoints(weir.CheckpointConfig{StateDir: t.TempDir(), Interval: 50 * time.Millisecond}))
	src := weir.FromSource(p, "numbers", generator.New(1<<40, func(i int64) int64 { return i }, generator.WithRate(1000)))
	counts := weir.Process(weir.KeyBy(src, func(v int64) int64 { return v % 10 }), func() weir.KeyedProcessFunction[int64, int64, int64] {
		return weir.ProcessFunc[int64, int64, int64](func(ctx *weir.KeyedContext[int64, int64], v int64) error {
			ctx.Emit(v)
			return nil
		})
	}, weir.Name("pass"))
	sink := weirtest.NewSink[int64]()
	weir.To(counts, "sink", sink)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer func() { cancel(); <-done }()
	select {
	case <-sink.Grew(0):
	case err := <-done:
		t.Fatalf("the job ended: %v", err)
	}

	s := NewServer(p)
	code, body := post(t, s, "/api/v1/rescale", `{"parallelism": {"pass": 3}}`)
	if code != 200 {
		t.Fatalf("rescale: %d %s", code, body)
	}
	var a RescaleAnswer
	if err := json.Unmarshal([]byte(body), &a); err != nil || a.Checkpoint == 0 || len(a.Tasks) != 1 || a.Tasks[0].From != 2 || a.Tasks[0].To != 3 {
		t.Fatalf("answer %s (%v)", body, err)
	}
	_, body = get(t, s, "/api/v1/jobs/live/tasks")
	var tasks []weir.TaskMetrics
	if err := json.Unmarshal([]byte(body), &tasks); err != nil {
		t.Fatal(err)
	}
	for _, tm := range tasks {
		if strings.HasPrefix(tm.Name, "pass") && (tm.Parallelism != 3 || len(tm.Subtasks) != 3) {
			t.Fatalf("task %s after the rescale: parallelism %d, %d subtasks", tm.Name, tm.Parallelism, len(tm.Subtasks))
		}
	}
	if _, body := get(t, s, "/metrics"); !strings.Contains(body, `weir_task_records_in_total{job="live",subtask="2",task="pass`) {
		t.Fatalf("/metrics has no subtask 2 of pass:\n%s", body)
	}
	if _, body := get(t, s, "/api/v1/jobs/live/changes"); !strings.Contains(body, `"live": true`) {
		t.Fatalf("/changes lists no live rescale: %s", body)
	}
}
