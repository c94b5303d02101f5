package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/weir-stream/weir"
)

// RescaleRequest is the body of POST /api/v1/rescale: the operators
// whose tasks change parallelism live, and the job to ask.
type RescaleRequest struct {
	// Parallelism maps an operator, by uid or name, to its task's new
	// parallelism.
	Parallelism map[string]int `json:"parallelism"`
	// Job names the job to ask, as /api/v1/jobs lists it; empty means
	// the server's only job that rescales live.
	Job string `json:"job,omitempty"`
}

// RescaleAnswer is the answer of POST /api/v1/rescale: the checkpoint
// the tasks changed at, the subtasks replaced, the pause, and each
// changed task with its parallelism before and after.
type RescaleAnswer struct {
	weir.LiveRescale
	// Tasks are the job report's entries of this rescale (Live, at
	// Checkpoint), one per changed task.
	Tasks []weir.Rescale `json:"tasks"`
}

// Rescaler is the ability of a Job to change the parallelism of its
// running tasks live; a *weir.Pipeline has it. Rescale blocks until the
// new subtasks restored their state or the rescale failed, as
// weir.Pipeline's does.
type Rescaler interface {
	Rescale(ctx context.Context, parallelism map[string]int) (weir.LiveRescale, error)
}

var (
	// ErrNoRescaleJob means the server serves no job that rescales live
	// (of the name the request gives), or several and the request names
	// none. A cluster's jobs are rescaled by weir rescale JOB through
	// their coordinator.
	ErrNoRescaleJob = errors.New("this server serves no single job that rescales live")
	// errEmptyRescale means a request names no operator.
	errEmptyRescale = errors.New(`the request names no operator: give {"parallelism": {"OPERATOR": N}}`)
)

// Rescale has the job req names, or the server's only job that rescales
// live, change parallelism as req asks. Besides the job's own errors
// (weir.ErrInvalidRescale, weir.ErrNotLive, weir.ErrNotRunning, an
// aborted checkpoint) it fails with ErrNoRescaleJob.
func (s *Server) Rescale(ctx context.Context, req RescaleRequest) (RescaleAnswer, error) {
	if len(req.Parallelism) == 0 {
		return RescaleAnswer{}, errEmptyRescale
	}
	var job Job
	for _, j := range s.list() {
		if req.Job != "" && j.Name() != req.Job {
			continue
		}
		if _, ok := j.(Rescaler); ok {
			if job != nil {
				return RescaleAnswer{}, ErrNoRescaleJob
			}
			job = j
		}
	}
	if job == nil && req.Job != "" {
		return RescaleAnswer{}, fmt.Errorf("%w: no job named %q rescales live", ErrNoRescaleJob, req.Job)
	}
	if job == nil {
		return RescaleAnswer{}, ErrNoRescaleJob
	}
	r, err := job.(Rescaler).Rescale(ctx, req.Parallelism)
	if err != nil {
		return RescaleAnswer{}, err
	}
	out := RescaleAnswer{LiveRescale: r, Tasks: []weir.Rescale{}}
	if rep := job.Report(); rep != nil {
		for _, rs := range rep.Rescales {
			if rs.Live && rs.Checkpoint == r.Checkpoint {
				out.Tasks = append(out.Tasks, rs)
			}
		}
	}
	return out, nil
}

// rescale serves POST /api/v1/rescale: a RescaleRequest in, the
// RescaleAnswer out, or {"error": ...} with the status rescaleStatus
// gives.
func (s *Server) rescale(w http.ResponseWriter, r *http.Request) {
	var req RescaleRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf(`the body is no rescale request {"parallelism": {"OPERATOR": N}, "job": "..."}: %w`, err))
		return
	}
	a, err := s.Rescale(r.Context(), req)
	if err != nil {
		writeError(w, rescaleStatus(err), err)
		return
	}
	writeJSON(w, a)
}

// rescaleStatus is the HTTP status of a failed rescale request: 400 for
// a request wrong in itself (no operator, an unknown one, a parallelism
// out of range), 404 when there is no job to ask, 409 when the job
// cannot change parallelism live or does not run, 500 otherwise (the
// checkpoint aborted, the new subtasks failed to start; the job then
// restarts by itself).
func rescaleStatus(err error) int {
	switch {
	case errors.Is(err, errEmptyRescale), errors.Is(err, weir.ErrInvalidRescale):
		return http.StatusBadRequest
	case errors.Is(err, ErrNoRescaleJob):
		return http.StatusNotFound
	case errors.Is(err, weir.ErrNotLive), errors.Is(err, weir.ErrNotRunning):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}
