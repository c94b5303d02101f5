package web

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli/internal/web/ui"
)

// Server serves /metrics and the JSON API /api/v1 for a set of jobs:
// their state, tasks, checkpoints and recoveries, savepoints of a
// running job (POST /api/v1/savepoints, savepoint.go) and live rescales
// (POST /api/v1/rescale, rescale.go).
type Server struct {
	// DefaultSavepointDir is where POST /api/v1/savepoints puts a
	// savepoint whose request names no directory (weir run
	// --savepoint-dir). Set it before Start.
	DefaultSavepointDir string

	mu   sync.Mutex
	jobs []Job
	more func() []Job // nil, or the jobs of a cluster, asked at each request
	mux  *http.ServeMux
}

// NewServer returns a server for jobs (more can be added with Add).
func NewServer(jobs ...Job) *Server {
	return newServer(jobs, nil, &collector{now: time.Now})
}

// newServer returns a server for jobs and those more returns, exporting
// the metrics of c (given the server's jobs) and extra collectors.
func newServer(jobs []Job, more func() []Job, c *collector, extra ...prometheus.Collector) *Server {
	s := &Server{jobs: jobs, more: more, mux: http.NewServeMux()}
	c.jobs = s.list
	reg := prometheus.NewRegistry()
	reg.MustRegister(append(extra, c, collectors.NewGoCollector())...)
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	s.mux.HandleFunc("GET /api/v1/jobs", s.listJobs)
	s.mux.HandleFunc("GET /api/v1/jobs/{job}", s.job)
	s.mux.HandleFunc("GET /api/v1/jobs/{job}/tasks", s.tasks)
	s.mux.HandleFunc("GET /api/v1/jobs/{job}/checkpoints", s.checkpoints)
	s.mux.HandleFunc("GET /api/v1/jobs/{job}/recoveries", s.recoveries)
	s.mux.HandleFunc("GET /api/v1/jobs/{job}/changes", s.changes)
	s.mux.HandleFunc("POST /api/v1/savepoints", s.savepoint)
	s.mux.HandleFunc("POST /api/v1/rescale", s.rescale)
	s.mux.Handle("GET /", ui.Handler()) // the dashboard and its scripts
	return s
}

// Add makes another job visible.
func (s *Server) Add(j Job) {
	s.mu.Lock()
	s.jobs = append(s.jobs, j)
	s.mu.Unlock()
}

func (s *Server) list() []Job {
	s.mu.Lock()
	jobs := append([]Job(nil), s.jobs...)
	s.mu.Unlock()
	if s.more != nil {
		jobs = append(jobs, s.more()...)
	}
	return jobs
}

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Start listens on addr (host:port; port 0 picks one) and serves until
// ctx ends. It returns the base URL; stop shuts the server down and waits
// for it, including the requests it is answering (up to 2 seconds), so a
// request that stopped the job (POST /api/v1/savepoints with "stop")
// gets its answer before the process exits.
func (s *Server) Start(ctx context.Context, addr string) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return
		}
	}()
	ctx, cancel := context.WithCancel(ctx)
	shut := make(chan struct{})
	go func() {
		defer close(shut)
		<-ctx.Done()
		sctx, c := context.WithTimeout(context.Background(), 2*time.Second)
		defer c()
		srv.Shutdown(sctx)
	}()
	stop = func() {
		cancel()
		<-done
		<-shut // Serve returns at once; Shutdown waits for the answers in progress
	}
	return "http://" + ln.Addr().String(), stop, nil
}

// JobInfo is a job in the API.
type JobInfo struct {
	Name string `json:"name"`
	weir.JobStatus
}

// TaskInfo is a task (a chain of operators) in the API, with its counters.
type TaskInfo struct {
	weir.TaskMetrics
}

func (s *Server) find(w http.ResponseWriter, r *http.Request) Job {
	name := r.PathValue("job")
	for _, j := range s.list() {
		if j.Name() == name {
			return j
		}
	}
	http.Error(w, `{"error":"no job named `+name+`"}`, http.StatusNotFound)
	return nil
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func (s *Server) listJobs(w http.ResponseWriter, _ *http.Request) {
	out := []JobInfo{}
	for _, j := range s.list() {
		out = append(out, JobInfo{Name: j.Name(), JobStatus: j.Status()})
	}
	writeJSON(w, out)
}

func (s *Server) job(w http.ResponseWriter, r *http.Request) {
	if j := s.find(w, r); j != nil {
		plan, _ := j.Explain()
		writeJSON(w, struct {
			JobInfo
			Plan string `json:"plan"`
		}{JobInfo{j.Name(), j.Status()}, plan})
	}
}

func (s *Server) tasks(w http.ResponseWriter, r *http.Request) {
	if j := s.find(w, r); j != nil {
		ms := j.Metrics()
		if ms == nil {
			ms = []weir.TaskMetrics{}
		}
		writeJSON(w, ms)
	}
}

func (s *Server) checkpoints(w http.ResponseWriter, r *http.Request) {
	if j := s.find(w, r); j != nil {
		out := []weir.CheckpointStats{}
		if rep := j.Report(); rep != nil {
			out = append(out, rep.Checkpoints...)
		}
		writeJSON(w, out)
	}
}

// Changes are a cluster job's rescales and leader changes (none for a
// job of weir run).
type Changes struct {
	Rescales      []weir.Rescale      `json:"rescales"`
	LeaderChanges []weir.LeaderChange `json:"leader_changes"`
}

func (s *Server) changes(w http.ResponseWriter, r *http.Request) {
	if j := s.find(w, r); j != nil {
		out := Changes{Rescales: []weir.Rescale{}, LeaderChanges: []weir.LeaderChange{}}
		if rep := j.Report(); rep != nil {
			out.Rescales = append(out.Rescales, rep.Rescales...)
			out.LeaderChanges = append(out.LeaderChanges, rep.LeaderChanges...)
		}
		writeJSON(w, out)
	}
}

func (s *Server) recoveries(w http.ResponseWriter, r *http.Request) {
	if j := s.find(w, r); j != nil {
		out := []weir.Recovery{}
		if rep := j.Report(); rep != nil {
			out = append(out, rep.Recoveries...)
		}
		writeJSON(w, out)
	}
}
