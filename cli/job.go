package cli

import (
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/spf13/pflag"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
)

// Job is a named pipeline that the weir command line can run: `weir run
// NAME [flags]`. A program registers its jobs with RegisterJob (usually in
// init) and calls Main; every process of a cluster then builds the same
// pipeline.
type Job struct {
	// Name is what `weir run` is given.
	Name string
	// Short is a one-line description for help output.
	Short string
	// Long is the full description shown by `weir run NAME --help`.
	Long string
	// Flags declares the job's own flags on fs and returns the function
	// that adds the job's operators to p once the flags are parsed.
	Flags func(fs *FlagSet) Builder
	// Verify, if set, checks the job's output rows against those of a
	// failure-free run for `weir run --verify`; the default is
	// VerifyLines.
	Verify func(g weir.Guarantee, ref, got []string) error
}

// FlagSet is the set of a job's flags (github.com/spf13/pflag's), so a
// job declares its flags without importing pflag:
//
//	Flags: func(fs *cli.FlagSet) cli.Builder {
//		n := fs.Int("events", 1000, "how many events to generate")
//		...
type FlagSet = pflag.FlagSet

// Flag is one flag of a FlagSet.
type Flag = pflag.Flag

// changeableOnRestore is the pflag annotation MayChangeOnRestore sets.
const changeableOnRestore = "weir-changeable-on-restore"

// MayChangeOnRestore marks flags of a job, declared on fs, whose values
// may differ between a run and a later run that restores its checkpoint:
// a throttle, a delay, an address, how many events a generator makes in
// all. The command line records every other flag of a job in its
// checkpoints (weir.Pipeline.RecordSetting) and refuses a restore that changes
// one, since the restored state was computed under the old value.
func MayChangeOnRestore(fs *FlagSet, names ...string) {
	for _, n := range names {
		if err := fs.SetAnnotation(n, changeableOnRestore, []string{"true"}); err != nil {
			panic(fmt.Sprintf("weir: MayChangeOnRestore: %v", err))
		}
	}
}

// ChangeableOnRestore reports whether MayChangeOnRestore marked f.
func ChangeableOnRestore(f *Flag) bool {
	_, ok := f.Annotations[changeableOnRestore]
	return ok
}

// Builder adds a job's operators to a pipeline. cfg carries the settings
// common to all jobs.
type Builder func(p *weir.Pipeline, cfg JobConfig) error

// JobConfig holds the command-line settings every job shares.
type JobConfig struct {
	// Output is where the job writes its results (--output): a directory of
	// JSON-lines part files, or "-" for standard output.
	Output string
	// Stdout is where output "-" goes (the command's standard output).
	Stdout io.Writer
	// OnMalformed is the policy for input records that cannot be parsed
	// (--on-malformed).
	OnMalformed connector.MalformedPolicy
	// Malformed counts records skipped under the skip policy; sources
	// should add to it.
	Malformed func(connector.MalformedError)
	// Explain is set when the run only prints its plan (--explain): a
	// job with plans of its own (weir sql) prints them to Stdout too.
	Explain bool
	// Log, if set, writes a line to the job's log (standard error).
	Log func(string)
}

var (
	jobsMu sync.Mutex
	jobs   = map[string]Job{}
)

// RegisterJob makes a job available to the command line. It panics on a
// duplicate or empty name, as registration happens at start-up.
func RegisterJob(j Job) {
	jobsMu.Lock()
	defer jobsMu.Unlock()
	if j.Name == "" || j.Flags == nil {
		panic("weir: RegisterJob needs a name and flags")
	}
	if _, dup := jobs[j.Name]; dup {
		panic(fmt.Sprintf("weir: job %q registered twice", j.Name))
	}
	jobs[j.Name] = j
}

// LookupJob returns the registered job name.
func LookupJob(name string) (Job, bool) {
	jobsMu.Lock()
	defer jobsMu.Unlock()
	j, ok := jobs[name]
	return j, ok
}

// Jobs returns the registered jobs sorted by name.
func Jobs() []Job {
	jobsMu.Lock()
	defer jobsMu.Unlock()
	out := make([]Job, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, j)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// VerifyLines checks output rows (JSON lines) against those of a
// failure-free run, as guarantee g promises for records: exactly-once the
// same multiset, at-least-once a superset, at-most-once a subset. Jobs
// whose rows are aggregates give their own check in Job.Verify.
func VerifyLines(g weir.Guarantee, ref, got []string) error {
	want := map[string]int{}
	for _, l := range ref {
		want[l]++
	}
	have := map[string]int{}
	for _, l := range got {
		have[l]++
	}
	for l, n := range want {
		if have[l] < n && g != weir.AtMostOnce {
			return fmt.Errorf("row %s appears %d times, want %d", l, have[l], n)
		}
	}
	for l, n := range have {
		if n > want[l] && g != weir.AtLeastOnce {
			return fmt.Errorf("row %s appears %d times, the failure-free run has it %d times", l, n, want[l])
		}
	}
	return nil
}
