package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/weir-stream/weir"
)

// savepointJob is a job whose savepoints are answered by fn. A stop
// with an option drains: weir.Drain is the only StopOption.
type savepointJob struct {
	Job
	fn func(dir string, stop, drain bool) (weir.Savepoint, error)
}

func (j savepointJob) Savepoint(_ context.Context, dir string) (weir.Savepoint, error) {
	return j.fn(dir, false, false)
}

func (j savepointJob) StopWithSavepoint(_ context.Context, dir string, opts ...weir.StopOption) (weir.Savepoint, error) {
	return j.fn(dir, true, len(opts) > 0)
}

func post(t *testing.T, s *Server, path, body string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(body)))
	out, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(out)
}

// POST /api/v1/savepoints passes the request's directory, or the
// server's default, its stop and its drain to the job, and answers the
// savepoint.
func TestSavepointRequestReachesTheJobAndAnswersTheSavepoint(t *testing.T) {
	type call struct {
		dir         string
		stop, drain bool
	}
	var got []call
	job := savepointJob{Job: weir.NewPipeline(), fn: func(dir string, stop, drain bool) (weir.Savepoint, error) {
		got = append(got, call{dir, stop, drain})
		return weir.Savepoint{Path: dir + "/savepoint-job-3-abcdef01", Checkpoint: 3, Bytes: 100}, nil
	}}
	s := NewServer(job)
	s.DefaultSavepointDir = "/default"
	for _, c := range []struct {
		body string
		want call
	}{
		{`{"dir": "/sp"}`, call{"/sp", false, false}},
		{`{"stop": true}`, call{"/default", true, false}},
		{`{"stop": true, "drain": true}`, call{"/default", true, true}},
		{`{"drain": true}`, call{"/default", true, true}},
		{``, call{"/default", false, false}},
	} {
		got = nil
		code, body := post(t, s, "/api/v1/savepoints", c.body)
		if code != 200 || len(got) != 1 || got[0] != c.want {
			t.Fatalf("body %q: %d %s, calls %v; want 200 and %v", c.body, code, body, got, c.want)
		}
		var sp weir.Savepoint
		if err := json.Unmarshal([]byte(body), &sp); err != nil || sp.Path != c.want.dir+"/savepoint-job-3-abcdef01" || sp.Checkpoint != 3 {
			t.Fatalf("body %q: answer %s (%v)", c.body, body, err)
		}
	}
}

// A request without a directory on a server without a default is a 400
// that says how to give one; a job that does not run answers 409; a
// failed savepoint 500; each with its message.
func TestSavepointRequestErrorsHaveTheirStatusAndMessage(t *testing.T) {
	s := NewServer(weir.NewPipeline(weir.WithName("idle")))
	code, body := post(t, s, "/api/v1/savepoints", `{}`)
	if code != 400 || !strings.Contains(body, "--savepoint-dir") {
		t.Fatalf("no directory: %d %s", code, body)
	}
	code, body = post(t, s, "/api/v1/savepoints", `{"dir": `)
	if code != 400 || !strings.Contains(body, "no savepoint request") {
		t.Fatalf("malformed body: %d %s", code, body)
	}
	code, body = post(t, s, "/api/v1/savepoints", `{"dir": "/sp"}`)
	if code != 409 || !strings.Contains(body, weir.ErrNotRunning.Error()) {
		t.Fatalf("job not running: %d %s", code, body)
	}
	failing := NewServer(savepointJob{Job: weir.NewPipeline(), fn: func(string, bool, bool) (weir.Savepoint, error) {
		return weir.Savepoint{}, errors.New("the savepoint's checkpoint 4 was aborted: timeout")
	}})
	code, body = post(t, failing, "/api/v1/savepoints", `{"dir": "/sp"}`)
	if code != 500 || !strings.Contains(body, "checkpoint 4 was aborted") {
		t.Fatalf("aborted: %d %s", code, body)
	}
	code, body = post(t, NewServer(), "/api/v1/savepoints", `{"dir": "/sp"}`)
	if code != 404 {
		t.Fatalf("no job: %d %s", code, body)
	}
}
