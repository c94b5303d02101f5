package cli

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli/internal/builtin"
	"github.com/weir-stream/weir/cli/internal/web"
)

// Option configures the command line that Main, Run and Command build.
type Option func(*settings)

// settings are the options of one command line.
type settings struct {
	name     string
	builtins bool
}

func newSettings(opts []Option) *settings {
	s := &settings{name: "weir", builtins: true}
	for _, o := range opts {
		o(s)
	}
	return s
}

// WithName sets the program's name, shown in its usage ("Usage: NAME
// run JOB") and at the start of its error messages. Main defaults to the
// name of the binary (os.Args[0]), Run and Command to "weir".
func WithName(name string) Option {
	return func(s *settings) {
		if name != "" {
			s.name = name
		}
	}
}

// WithoutBuiltins leaves weir's demo jobs (those package cli/jobs
// registers: wordcount, keycount, nexmark, ...) and its benchmark tools
// (the nexmark and bench commands) out of the command line, so that a
// program built on Main offers only its own jobs, the sql job and the
// commands that run and manage jobs (run, coordinator, worker, submit,
// savepoint, ...). A cluster's processes must agree on it: a worker
// started without the demo jobs cannot run one.
func WithoutBuiltins() Option {
	return func(s *settings) { s.builtins = false }
}

// mainName is the default name of Main's program: the binary's.
func mainName() string {
	if len(os.Args) == 0 {
		return ""
	}
	return strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe")
}

// jobs returns the registered jobs this command line offers, sorted by
// name.
func (s *settings) jobs() []Job {
	var out []Job
	for _, j := range Jobs() {
		if s.builtins || !builtin.IsJob(j.Name) {
			out = append(out, j)
		}
	}
	return out
}

// lookupJob returns the registered job name if this command line offers
// it.
func (s *settings) lookupJob(name string) (Job, bool) {
	j, ok := LookupJob(name)
	if !ok || (!s.builtins && builtin.IsJob(name)) {
		return Job{}, false
	}
	return j, true
}

// jobNames lists the offered jobs for error messages.
func (s *settings) jobNames() string {
	var names []string
	for _, j := range s.jobs() {
		names = append(names, j.Name)
	}
	if len(names) == 0 {
		return "(none registered)"
	}
	return strings.Join(names, ", ")
}

// command is a subcommand added to every root command.
type command struct {
	build   func(stdout, stderr io.Writer, s *settings) *cobra.Command
	builtin bool // one of weir's benchmark tools, left out by WithoutBuiltins
}

// Dashboard returns the HTTP handler that weir run --http serves, for a
// program that runs pipelines itself and serves them on its own server:
// the dashboard at /, Prometheus metrics at /metrics and the JSON API
// under /api/v1 (docs/metrics.md), including POST /api/v1/savepoints and
// POST /api/v1/rescale. savepointDir is where a savepoint goes whose
// request names no directory; with "" such a request is refused. The
// pipelines may be added before or while they run.
func Dashboard(savepointDir string, pipelines ...*weir.Pipeline) http.Handler {
	jobs := make([]web.Job, len(pipelines))
	for i, p := range pipelines {
		jobs[i] = p
	}
	srv := web.NewServer(jobs...)
	srv.DefaultSavepointDir = savepointDir
	return srv
}
