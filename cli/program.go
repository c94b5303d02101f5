package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/cluster"
)

// program is the cluster's view of the jobs registered in this binary:
// every process of a cluster builds a job's pipeline from the same name
// and arguments.
type program struct {
	stdout, stderr io.Writer
	s              *settings
}

func (pr program) Jobs() []string {
	var names []string
	for _, j := range pr.s.jobs() {
		names = append(names, j.Name)
	}
	return names
}

// Open parses a job's command-line arguments as `weir run JOB` does and
// builds its pipeline, named name.
func (pr program) Open(_ context.Context, job, name string, args []string) (cluster.Pipeline, error) {
	j, ok := pr.s.lookupJob(job)
	if !ok {
		return nil, fmt.Errorf("unknown job %q; available jobs: %s", job, pr.s.jobNames())
	}
	fs := pflag.NewFlagSet(job, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := &runFlags{}
	build := f.defineJob(j, fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch {
	case f.ft.verify:
		return nil, fmt.Errorf("--verify runs only with weir run")
	case f.explain:
		return nil, fmt.Errorf("--explain runs only with weir run")
	case f.http != "":
		return nil, fmt.Errorf("--http is not a job flag on a cluster: the coordinator serves every job's dashboard (weir coordinator --http), and weir submit --http the submitted job's")
	}
	base, policy, err := f.baseOptions()
	if err != nil {
		return nil, err
	}
	ftOpts, err := f.ft.options()
	if err != nil {
		return nil, err
	}
	logf := func(line string) { fmt.Fprintf(pr.stderr, "weir: job %s: %s\n", name, line) }
	p := weir.NewPipeline(append(append(base, weir.WithName(name), weir.WithLog(logf)), ftOpts...)...)
	cfg := JobConfig{Output: f.output, Stdout: pr.stdout, OnMalformed: policy, Log: logf}
	if err := build(p, cfg); err != nil {
		return nil, err
	}
	f.recordSettings(p)
	if _, err := p.Explain(); err != nil {
		return nil, err
	}
	return p.Engine(), nil
}
