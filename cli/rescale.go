package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/weir-stream/weir/cli/internal/web"
)

// Live rescales of a job run by weir run: weir rescale --http asks the
// job's API (POST /api/v1/rescale) to change the parallelism of some of
// its operators' tasks while it runs. docs/fault-tolerance.md.

// rescaleFlags are weir rescale's flags, shared by its two modes: a job
// on a cluster (JOB) and the job weir run serves (--http).
type rescaleFlags struct {
	addr        string
	operators   []string
	parallelism int
}

func (f *rescaleFlags) define(fs *pflag.FlagSet) {
	fs.IntVarP(&f.parallelism, "parallelism", "p", 0, "the new parallelism: of the job on a cluster, or of the tasks of the operators --operator names without their own")
	fs.StringArrayVar(&f.operators, "operator", nil, "an operator whose task changes parallelism, by name or uid, as NAME (at --parallelism) or NAME=N; repeat for several")
	fs.StringVar(&f.addr, "http", "127.0.0.1:8081", "address the job serves its API on (weir run --http)")
}

// changes returns the parallelism f asks of each operator; pSet says
// whether --parallelism was given.
func (f *rescaleFlags) changes(pSet bool) (map[string]int, error) {
	if len(f.operators) == 0 {
		return nil, usagef("rescale: name the operator whose task changes with --operator NAME (weir run JOB --explain shows the tasks), or give JOB for a job on a cluster")
	}
	out := map[string]int{}
	for _, op := range f.operators {
		name, n := op, f.parallelism
		if i := strings.LastIndex(op, "="); i >= 0 {
			v, err := strconv.Atoi(op[i+1:])
			if err != nil {
				return nil, usagef("rescale: --operator %q: want NAME or NAME=N, N the new parallelism", op)
			}
			name, n = op[:i], v
		} else if !pSet {
			return nil, usagef("rescale: give the new parallelism of %q with --parallelism N, or as --operator %s=N", op, op)
		}
		if name == "" {
			return nil, usagef("rescale: --operator %q names no operator", op)
		}
		if old, ok := out[name]; ok && old != n {
			return nil, usagef("rescale: --operator %q is given parallelism %d and %d", name, old, n)
		}
		out[name] = n
	}
	return out, nil
}

// httpRescale asks the job weir run serves at f.addr to rescale live as
// f says and prints the outcome: the tasks changed, the checkpoint, the
// subtasks replaced and the pause.
func httpRescale(ctx context.Context, f rescaleFlags, pSet bool, stdout io.Writer) error {
	changes, err := f.changes(pSet)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, rescaleTimeout)
	defer cancel()
	var a web.RescaleAnswer
	if err := postAPI(ctx, "rescale", f.addr, "/api/v1/rescale", web.RescaleRequest{Parallelism: changes}, &a); err != nil {
		return err
	}
	var tasks []string
	for _, t := range a.Tasks {
		tasks = append(tasks, fmt.Sprintf("%q from parallelism %d to %d", t.Task, t.From, t.To))
	}
	if len(tasks) == 0 { // the job's report lags: name what was asked
		for name, n := range changes {
			tasks = append(tasks, fmt.Sprintf("%q to parallelism %d", name, n))
		}
	}
	fmt.Fprintf(stdout, "rescaled %s live at checkpoint %d (%d subtasks replaced, paused %v)\n",
		strings.Join(tasks, ", "), a.Checkpoint, a.Replaced, a.Pause.Round(time.Millisecond))
	return nil
}
