package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/weir-stream/weir"
)

// SavepointRequest is the body of POST /api/v1/savepoints: where the
// savepoint goes, whether the job stops after it and whether it drains
// before it.
type SavepointRequest struct {
	// Dir is the directory (or blob URL) the savepoint's directory goes
	// under; empty means the server's DefaultSavepointDir.
	Dir string `json:"dir,omitempty"`
	// Stop ends the job after the savepoint (StopWithSavepoint).
	Stop bool `json:"stop,omitempty"`
	// Drain has the job's sources emit the final watermark before the
	// savepoint, so every event-time window fires into it, and stops the
	// job (StopWithSavepoint with weir.Drain); it implies Stop.
	Drain bool `json:"drain,omitempty"`
	// Job names the job to ask, as /api/v1/jobs lists it; empty means
	// the server's only job that takes savepoints. A coordinator's
	// server (weir coordinator --http) serves several.
	Job string `json:"job,omitempty"`
}

// Savepointer is the ability of a Job to take savepoints; a
// *weir.Pipeline has it. Both methods block until the savepoint is
// written or failed, as weir.Pipeline's do.
type Savepointer interface {
	Savepoint(ctx context.Context, dir string) (weir.Savepoint, error)
	StopWithSavepoint(ctx context.Context, dir string, opts ...weir.StopOption) (weir.Savepoint, error)
}

// SavepointTaker is the ability of a Job to take the savepoint a request
// asks for in one call, req.Dir filled in: a cluster's job, whose
// coordinator takes it. The server prefers it to Savepointer. It blocks
// until the savepoint is written or failed.
type SavepointTaker interface {
	TakeSavepoint(ctx context.Context, req SavepointRequest) (weir.Savepoint, error)
}

var (
	// ErrNoSavepointDir means a request named no directory and the
	// server has no default.
	ErrNoSavepointDir = errors.New(`no savepoint directory: give "dir" in the request (weir savepoint --dir DIR), or start the job with --savepoint-dir DIR`)
	// ErrNoSavepointJob means the server serves no job that takes
	// savepoints (of the name the request gives), or several and the
	// request names none.
	ErrNoSavepointJob = errors.New("this server serves no single job that takes savepoints")
)

// Savepoint takes the savepoint req asks for of the server's job and
// returns it: of the job req names, or of the server's only job that
// takes savepoints. Besides the job's own errors (weir.ErrNotRunning,
// weir.ErrNoCheckpoints, an aborted checkpoint) it fails with
// ErrNoSavepointDir or ErrNoSavepointJob.
func (s *Server) Savepoint(ctx context.Context, req SavepointRequest) (weir.Savepoint, error) {
	if req.Dir == "" {
		req.Dir = s.DefaultSavepointDir
	}
	if req.Dir == "" {
		return weir.Savepoint{}, ErrNoSavepointDir
	}
	var job Job
	for _, j := range s.list() {
		if req.Job != "" && j.Name() != req.Job {
			continue
		}
		_, taker := j.(SavepointTaker)
		if _, ok := j.(Savepointer); ok || taker {
			if job != nil {
				return weir.Savepoint{}, ErrNoSavepointJob
			}
			job = j
		}
	}
	if job == nil && req.Job != "" {
		return weir.Savepoint{}, fmt.Errorf("%w: no job named %q takes savepoints", ErrNoSavepointJob, req.Job)
	}
	if job == nil {
		return weir.Savepoint{}, ErrNoSavepointJob
	}
	if t, ok := job.(SavepointTaker); ok {
		return t.TakeSavepoint(ctx, req)
	}
	return takeSavepoint(ctx, job.(Savepointer), req)
}

// takeSavepoint has job take the savepoint req asks for.
func takeSavepoint(ctx context.Context, job Savepointer, req SavepointRequest) (weir.Savepoint, error) {
	if req.Drain {
		return job.StopWithSavepoint(ctx, req.Dir, weir.Drain())
	}
	if req.Stop {
		return job.StopWithSavepoint(ctx, req.Dir)
	}
	return job.Savepoint(ctx, req.Dir)
}

// savepoint serves POST /api/v1/savepoints: a SavepointRequest in, the
// weir.Savepoint written out, or {"error": ...} with the status
// savepointStatus gives.
func (s *Server) savepoint(w http.ResponseWriter, r *http.Request) {
	var req SavepointRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil && !errors.Is(err, io.EOF) {
		writeError(w, http.StatusBadRequest, fmt.Errorf(`the body is no savepoint request {"dir": "...", "stop": false, "drain": false}: %w`, err))
		return
	}
	sp, err := s.Savepoint(r.Context(), req)
	if err != nil {
		writeError(w, savepointStatus(err), err)
		return
	}
	writeJSON(w, sp)
}

// savepointStatus is the HTTP status of a failed savepoint request: 400
// for a request that names no directory, 404 when there is no job to
// ask, 409 when the job is not in a state to take one, 500 otherwise
// (the checkpoint aborted, the savepoint could not be written).
func savepointStatus(err error) int {
	switch {
	case errors.Is(err, ErrNoSavepointDir):
		return http.StatusBadRequest
	case errors.Is(err, ErrNoSavepointJob):
		return http.StatusNotFound
	case errors.Is(err, weir.ErrNotRunning), errors.Is(err, weir.ErrNoCheckpoints):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

// writeError answers status with {"error": err}.
func writeError(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(struct {
		Error string `json:"error"`
	}{err.Error()})
}
