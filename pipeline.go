// Package weir is a stream processing engine: build a dataflow pipeline of
// typed streams, then run it in parallel with event time, keyed state and
// windows.
//
// A pipeline starts from sources (FromSource), transforms streams with Map,
// Filter, FlatMap, KeyBy, Process, windows and joins, and ends in sinks
// (To). Nothing runs until Run:
//
//	p := weir.NewPipeline(weir.WithParallelism(2))
//	words := weir.FlatMap(weir.FromSource(p, "lines", file.Lines("in.txt")), splitWords)
//	counts := weir.Reduce(weir.KeyBy(words, wordKey), addCounts)
//	weir.To(counts, "out", file.JSONSink[WordCount]("out"))
//	err := p.Run(ctx)
//
// Functions passed to operators run concurrently in several subtasks: they
// must not share mutable data except through the state API.
package weir

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/job"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/state/lsm"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// Pipeline is a dataflow graph under construction. Build it from one
// goroutine; Run runs it.
type Pipeline struct {
	g   plan.Graph
	cfg config
	err error // first construction error, reported by Run and Explain
	// sides holds the side outputs of the operators that have them
	// (side.go).
	sides map[*plan.Node]*sideOutputs
	// timeRoles holds what operators do with event time, for the
	// checks before a run (validate.go).
	timeRoles map[*plan.Node]roleOf
	// running holds the runtimes of the current attempt, for Metrics.
	running atomic.Pointer[runtimes]
	report  atomic.Pointer[engine.Report]
	live    atomic.Pointer[engine.Live]
	status  atomic.Pointer[JobStatus]
	// saves carries savepoint requests to the running engine; runEnd is
	// closed when the current run's engine returned.
	saves chan engine.SavepointRequest
	// rescales carries live rescale requests likewise (rescale.go).
	rescales chan engine.RescaleRequest
	runEnd   atomic.Pointer[chan struct{}]
}

// JobStatus is where a pipeline's run stands.
type JobStatus struct {
	// State is "created", "running", "finished", "stopped" (after a
	// savepoint, StopWithSavepoint), "failed" or "cancelled".
	State     string    `json:"state"`
	Started   time.Time `json:"started,omitzero"`
	Ended     time.Time `json:"ended,omitzero"`
	Error     string    `json:"error,omitempty"`
	Guarantee string    `json:"guarantee"`
	Failover  string    `json:"failover"`
	// Standby is "active" when the job runs active standbys.
	Standby string `json:"standby,omitempty"`
}

// Status returns the state of the pipeline's current or latest Run. It is
// safe to call from any goroutine.
func (p *Pipeline) Status() JobStatus {
	if s := p.status.Load(); s != nil {
		return *s
	}
	return JobStatus{State: "created", Guarantee: p.cfg.Guarantee.String(), Failover: p.cfg.Failover.String(), Standby: p.cfg.standby()}
}

func (c *config) standby() string {
	if c.ActiveStandby {
		return "active"
	}
	return ""
}

// config is what the options set: the settings of the job's runs, and
// what Run calls before any task starts.
type config struct {
	job.Settings
	onStart func(RunStart) error
	// tasks holds parallelism per task (vertex ID) that overrides the
	// plan's (WithTaskParallelism).
	tasks map[int]int
}

// Option configures a pipeline.
type Option func(*Pipeline)

// WithName names the job.
func WithName(name string) Option { return func(p *Pipeline) { p.cfg.Name = name } }

// WithParallelism sets the default number of parallel subtasks per
// operator (default 1).
func WithParallelism(n int) Option { return func(p *Pipeline) { p.g.Parallelism = n } }

// WithMaxParallelism sets the number of key groups (default 128): the upper
// bound of any operator's parallelism and the unit in which keyed state is
// split between subtasks. Keep it fixed for the life of a job.
func WithMaxParallelism(n int) Option { return func(p *Pipeline) { p.g.MaxParallelism = n } }

// WithTaskParallelism sets the parallelism of tasks of the pipeline's
// plan by task ID (the number Explain prints before each task), after
// the plan is built: the chaining stays as the operators' own
// parallelism made it. A live rescale of a cluster's job (weir rescale
// --operator) records its change so (the job flag --task-parallelism),
// so that every later run of the job builds the changed plan.
func WithTaskParallelism(tasks map[int]int) Option {
	return func(p *Pipeline) { p.cfg.tasks = tasks }
}

// WithChaining turns operator chaining on (the default) or off. Without it
// every operator runs in a task of its own.
func WithChaining(on bool) Option { return func(p *Pipeline) { p.g.DisableChaining = !on } }

// WithWatermarkInterval sets how often sources emit watermarks (default
// 200ms).
func WithWatermarkInterval(d time.Duration) Option {
	return func(p *Pipeline) { p.cfg.WatermarkInterval = d }
}

// WithBufferTimeout bounds how long a source holds a partly filled output
// batch (default 100ms). Other tasks ship their batches whenever their input
// runs dry.
func WithBufferTimeout(d time.Duration) Option { return func(p *Pipeline) { p.cfg.BufferTimeout = d } }

// WithIdleTimeout marks a source subtask idle after it produced nothing for
// d, so that it does not hold back the watermark of downstream operators.
// 0 (the default) never marks sources idle.
func WithIdleTimeout(d time.Duration) Option { return func(p *Pipeline) { p.cfg.IdleTimeout = d } }

// WithLatencyTracking makes sources emit latency markers every interval
// (sampled tracking; Flink's default interval is 2s), or after every batch
// they read when interval is negative (full tracking). Tasks record the
// markers' age and sinks the event-time latency of what they write, in
// Metrics. 0 (the default) turns tracking off.
func WithLatencyTracking(interval time.Duration) Option {
	return func(p *Pipeline) { p.cfg.LatencyInterval = interval }
}

// WithQueueCapacity sets how many batches each input channel buffers before
// its sender blocks (default 8).
func WithQueueCapacity(n int) Option { return func(p *Pipeline) { p.cfg.QueueCapacity = n } }

// CheckpointConfig tunes checkpoints. Zero fields take defaults.
type CheckpointConfig struct {
	// Interval between checkpoints (default 1s).
	Interval time.Duration
	// Timeout after which an unfinished checkpoint is aborted (default 10m).
	Timeout time.Duration
	// MinPause between the end of one checkpoint and the next (default 0).
	MinPause time.Duration
	// MaxConcurrent checkpoints in flight (default 1).
	MaxConcurrent int
	// TolerableFailures is how many consecutive failed checkpoints the job
	// survives; the next failure fails the job, which then restarts by its
	// restart strategy. The zero value tolerates none (as Flink's default);
	// Unlimited never fails the job.
	TolerableFailures int
	// Retained is how many completed checkpoints are kept (default 3).
	Retained int
	// StateDir is where checkpoints are written: a directory (a path or
	// file:///path, local or on a shared file system), an S3-compatible
	// bucket (s3://bucket/prefix?endpoint=URL, credentials from
	// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), or memory://, as
	// docs/fault-tolerance.md describes. Empty keeps them in memory, which
	// survives failures within the process only.
	StateDir string
	// Unaligned makes exactly-once checkpoints unaligned: barriers do not
	// wait behind records, which are stored with the snapshot instead.
	Unaligned bool
	// AlignedTimeout switches an aligned checkpoint to the unaligned way
	// at a task that waited this long for its barriers (0: never), as
	// Flink's aligned-checkpoint timeout does.
	AlignedTimeout time.Duration
	// Log reports every completed checkpoint through WithLog.
	Log bool
	// CheckConsistency verifies that every checkpoint is a consistent cut
	// (per channel, the receiver reflects exactly what the sender sent
	// before its snapshot) and fails the job if not. Exactly-once
	// checkpoints always are; at-least-once ones need not be. It costs
	// little and is meant for tests.
	CheckConsistency bool
}

// Unlimited, as CheckpointConfig.TolerableFailures, never fails the job
// for failed checkpoints.
const Unlimited = -1

// WithGuarantee sets the job's recovery semantics (default None).
func WithGuarantee(g Guarantee) Option { return func(p *Pipeline) { p.cfg.Guarantee = g } }

// WithFailover sets the failover strategy (default GlobalFailover).
func WithFailover(f Failover) Option { return func(p *Pipeline) { p.cfg.Failover = f } }

// StateBackend says where keyed state lives (as Flink's state backends).
type StateBackend struct {
	// Name is "memory" (the default: Go maps) or "pebble" (LSM stores on
	// local disk: state larger than memory, recovery from local files).
	// Both checkpoint incrementally: a checkpoint writes what changed
	// since the one before, into files of the checkpoint directory that
	// later checkpoints share.
	Name string
	// FullSnapshots, for memory, makes every checkpoint write all the
	// state instead, in one file per subtask.
	FullSnapshots bool
	// IncrementalFrom, for memory, is the size in bytes from which the
	// state of one operator in one subtask (a table) is checkpointed
	// incrementally, in files of its own; smaller state is written whole
	// with the subtask's, which costs less than a file. Zero means 1 MiB;
	// a negative value makes all state incremental.
	IncrementalFrom int64
	// Dir, for pebble, is the local directory of the stores and of the
	// local copies of checkpointed files; empty for a temporary one.
	Dir string
	// BlockCache and MemTables, for pebble, are the bytes of block cache
	// and of memtables that every store of the process shares; zero
	// takes an eighth and a sixteenth of the memory available (the Go
	// memory limit when one is set), at most 1 GiB and 256 MiB. The job
	// whose store opens first sizes them, for as long as runs in the
	// process use them.
	BlockCache, MemTables int64
}

// WithStateBackend chooses where keyed state lives. A checkpoint of the
// pebble backend restores only under pebble; a savepoint restores under
// either.
func WithStateBackend(b StateBackend) Option {
	return func(p *Pipeline) {
		p.cfg.State = job.StateBackend{Backend: b.Name, Dir: b.Dir, BlockCache: b.BlockCache, MemTables: b.MemTables, FullSnapshots: b.FullSnapshots, IncrementalFrom: b.IncrementalFrom}
	}
}

// ParseStateBackend parses a state backend's name: memory or pebble.
func ParseStateBackend(s string) (string, error) { return job.ParseStateBackend(s) }

// WithRetainLimit bounds the bytes of output each subtask retains for
// upstream backup under FineGrainedFailover (default 256 MiB). A subtask
// past the bound drops what it retained until its next checkpoint
// barrier, and logs it; if one of its consumers fails meanwhile, the job
// falls back to a global rollback. It bounds too the input a restarted
// subtask that repeats its logged consumption order takes from channels
// the order does not name yet; past it the job rolls back globally.
func WithRetainLimit(bytes int64) Option { return func(p *Pipeline) { p.cfg.RetainLimit = bytes } }

// WithActiveStandby runs an active standby of every task that can have
// one under FineGrainedFailover in one process: a second instance of the
// task that processes the same input in the same order, at about twice
// the task's cost, while receivers keep the first copy of each record.
// When the task fails its standby takes its place: nothing restarts and
// no source rewinds. A task can have one when it reads inputs, has
// outputs, and regenerates them exactly (Map, Filter, FlatMap, windows,
// keyed process functions that implement DeterministicFunction); sources
// and sinks restart alone instead. A standby that failed or took over
// is replaced from the latest completed checkpoint (or the next one, when
// the primary's input log no longer reaches back to it).
func WithActiveStandby() Option { return func(p *Pipeline) { p.cfg.ActiveStandby = true } }

// WithCheckpoints tunes checkpoints; they are taken when the guarantee is
// ExactlyOnce or AtLeastOnce.
func WithCheckpoints(c CheckpointConfig) Option {
	return func(p *Pipeline) { p.cfg.Checkpoints = job.Checkpoints(c) }
}

// WithRestartStrategy sets how failed jobs restart: "none", "fixed-delay",
// "exponential-backoff" or "failure-rate", with its limit of attempts (or
// failures per interval), its delay, the backoff's maximum delay, and the
// failure-rate interval. The default for fault-tolerant guarantees is
// fixed-delay with 10 attempts and 100ms.
func WithRestartStrategy(name string, attempts int, delay, maxDelay, interval time.Duration) Option {
	return func(p *Pipeline) {
		r, err := engine.ParseRestart(name, attempts, delay, maxDelay, interval)
		if err != nil {
			p.setErr(err)
			return
		}
		p.cfg.Restart = r
	}
}

// WithInjectedFailures kills n tasks during the run, at random moments and
// at named points of the checkpoint protocol, chosen by seed.
func WithInjectedFailures(n int, seed uint64) Option {
	return func(p *Pipeline) { p.cfg.Failures, p.cfg.FailureSeed = n, seed }
}

// WithFailureWindow makes random-moment kills happen within d of the start
// of an attempt (default: three checkpoint intervals, at most 1s; 100ms
// without checkpoints).
func WithFailureWindow(d time.Duration) Option { return func(p *Pipeline) { p.cfg.FailureWindow = d } }

// WithFailuresAfterACheckpoint makes the random-moment kills of
// WithInjectedFailures wait, in a job that takes checkpoints, until one has
// completed: so a recovery they cause restores a checkpoint, however long
// the first one takes on a loaded machine. Kills at named points of the
// checkpoint protocol are not held back.
func WithFailuresAfterACheckpoint() Option {
	return func(p *Pipeline) { p.cfg.FailuresAfterCheckpoint = true }
}

// RunStart describes a run as it starts (WithOnStart).
type RunStart struct {
	// Run names the run in its checkpoints: a fresh run gets a new name;
	// a restored run continues the run of its checkpoint, under its name.
	// It is empty when the guarantee takes no checkpoints.
	Run string
	// Restored is the checkpoint the run starts from; 0 for a fresh run.
	Restored uint64
}

// ErrOtherRun means a restore would continue another run's output than
// the one it was asked to continue.
var ErrOtherRun = job.ErrOtherRun

// WithOnStart calls f once per Run, after
// the checkpoint to restore is chosen and checked and before any task
// starts; an error from f ends Run with it. The pipeline's Status is
// "running" from just before f is called, so a savepoint or rescale
// asked from then on waits for the tasks. weir run prepares its output
// directory with it: a fresh run marks the directory as its own, and a
// restore checks that the directory holds the output of the checkpoint's
// run (returning an error wrapping ErrOtherRun if not).
func WithOnStart(f func(RunStart) error) Option { return func(p *Pipeline) { p.cfg.onStart = f } }

// WithRestore starts the job from a retained checkpoint of its state
// directory, "latest" or the path of a checkpoint (its directory or its
// _metadata file), or from a savepoint (its directory, see Savepoint).
// The parallelism and the operators may differ from the checkpoint's:
// state moves by operator uid (UID) and key group.
func WithRestore(what string) Option { return func(p *Pipeline) { p.cfg.Restore = what } }

// WithAllowNonRestoredState lets a restore drop the state of operators
// the checkpoint or savepoint holds but the job no longer has (no
// operator has their uid, see UID); without it such a restore fails
// before any record is read, naming the operator.
func WithAllowNonRestoredState() Option {
	return func(p *Pipeline) { p.cfg.AllowNonRestoredState = true }
}

// DefaultStallTimeout is how long a job may make no progress before it
// reports what it waits on and fails the attempt (WithStallTimeout).
const DefaultStallTimeout = job.DefaultStallTimeout

// WithStallTimeout sets how long a job may make no progress — no record
// taken in or sent out by any task, no checkpoint completed, no task
// finished or restarted — before it logs what it waits on (checkpoints
// in flight and, per subtask, what it is blocked on) and fails the
// attempt, which the restart strategy then recovers like any other
// failure. Default DefaultStallTimeout; 0 never does. With checkpoints
// it is at least twice the checkpoint interval. A source that polls for
// input and finds none waits for the outside world, which counts as
// progress while no checkpoint is in flight. onStall, if not nil, also
// receives the report.
func WithStallTimeout(d time.Duration, onStall func(report string)) Option {
	return func(p *Pipeline) { p.cfg.StallTimeout, p.cfg.OnStall = &d, onStall }
}

// WithLog receives a line for each notable event of a run: failures,
// restarts, restores, skipped corrupt checkpoints.
func WithLog(f func(string)) Option { return func(p *Pipeline) { p.cfg.Log = f } }

// NewPipeline returns an empty pipeline.
func NewPipeline(opts ...Option) *Pipeline {
	p := &Pipeline{cfg: config{Settings: job.Settings{Name: "job"}}, saves: make(chan engine.SavepointRequest), rescales: make(chan engine.RescaleRequest)}
	for _, o := range opts {
		o(p)
	}
	return p
}

// RecordSetting declares a setting of the job that its results depend
// on, such as a window's size or a generator's seed: every checkpoint
// records the job's settings, and a restore refuses a checkpoint taken
// with a different value of any of them, naming the setting. Name it as
// the user sets it (weir run records a job's flags as "--window"). Call
// it while building the pipeline; a later call for the same name replaces
// the value.
func (p *Pipeline) RecordSetting(name, value string) {
	if p.cfg.Recorded == nil {
		p.cfg.Recorded = map[string]string{}
	}
	p.cfg.Recorded[name] = value
}

// Name returns the job's name.
func (p *Pipeline) Name() string { return p.cfg.Name }

func (p *Pipeline) setErr(err error) {
	if p.err == nil {
		p.err = err
	}
}

// Plan returns the physical plan.
func (p *Pipeline) plan() (*plan.Plan, error) {
	if p.err != nil {
		return nil, p.err
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	pl, err := plan.Build(&p.g)
	if err != nil || len(p.cfg.tasks) == 0 {
		return pl, err
	}
	return pl.WithParallelism(p.cfg.tasks)
}

// Explain returns the physical plan as text: the tasks, the operators
// chained in each, their parallelism and how records move between them.
func (p *Pipeline) Explain() (string, error) {
	pl, err := p.plan()
	if err != nil {
		return "", err
	}
	return pl.String(), nil
}

// Run runs the pipeline in this process until its bounded sources are
// exhausted and every record has reached the sinks, the job fails for good,
// or ctx is cancelled. It returns nil on completion, the failure, or ctx's
// error. Every goroutine Run starts has exited when it returns.
//
// With a fault-tolerant guarantee, a failed attempt is restarted by the
// restart strategy and restored as the guarantee says; Report tells what
// happened.
func (p *Pipeline) Run(ctx context.Context) error { return p.run(ctx, nil, nil, nil) }

// Engine gives weir's own command line the pipeline's engine side, to run
// it on a cluster: its compiled engine configuration, and Run with
// attempts started by the cluster and output-deciding writes fenced by
// the coordinator's leadership. Its type is internal to weir; programs
// run pipelines with Run.
func (p *Pipeline) Engine() job.Handle {
	return job.NewHandle(p.compile, p.run, p.engineReport, p.engineSavepoint, p.engineRescale)
}

// compile returns the engine configuration of a run.
func (p *Pipeline) compile(ctx context.Context) (engine.Config, error) {
	pl, err := p.plan()
	if err != nil {
		return engine.Config{}, err
	}
	return p.engineConfig(ctx, pl, nil)
}

// engineConfig returns the engine configuration of a run of plan pl, its
// checkpoint store fenced by fence if not nil.
func (p *Pipeline) engineConfig(ctx context.Context, pl *plan.Plan, fence store.Fence) (engine.Config, error) {
	cfg, err := job.Compile(ctx, &p.cfg.Settings, pl, fence, func(rt *task.Runtime) { p.running.Store(&runtimes{rt}) })
	cfg.OnSuccessor = func(rt *task.Runtime) {
		rs := append(slices.Clone(*p.running.Load()), rt)
		p.running.Store(&rs)
	}
	return cfg, err
}

// run runs the pipeline; deploy, if not nil, starts its attempts on a
// cluster, fence, if not nil, guards the checkpoint store's writes that
// decide output, and adopt, if not nil, makes the run take over the
// attempt deploy holds running (engine.Config.Adopt).
func (p *Pipeline) run(ctx context.Context, deploy engine.Deployer, fence store.Fence, adopt *engine.Adoption) error {
	if deploy == nil {
		// The run's stores live in this process: the pebble backend's
		// temporary directory goes when the last run here ends.
		lsm.Enter()
		defer lsm.Leave()
	}
	pl, err := p.plan()
	if err != nil {
		return err
	}
	cfg, err := p.engineConfig(ctx, pl, fence)
	if err != nil {
		return fmt.Errorf("job %q: %w", p.cfg.Name, err)
	}
	cfg.Deploy = deploy
	cfg.Adopt = adopt
	cfg.SubtaskRestarts = deploy != nil // the cluster's executors restart single subtasks
	if cfg.Failures != nil && deploy != nil {
		cfg.Failures.NamedWait = max(5*cfg.Failures.MaxDelay, 2*time.Second)
	}
	live := &engine.Live{}
	cfg.Live = live
	p.live.Store(live)
	// Running from before onStart: a savepoint or rescale asked as soon
	// as it was called waits for the tasks instead of failing with
	// ErrNotRunning.
	st := JobStatus{State: "running", Started: time.Now(), Guarantee: p.cfg.Guarantee.String(), Failover: p.cfg.Failover.String(), Standby: p.cfg.standby()}
	p.status.Store(&st)
	cfg.Savepoints = p.saves
	cfg.Rescales = p.rescales
	end := make(chan struct{})
	p.runEnd.Store(&end)
	if p.cfg.onStart != nil {
		start := RunStart{Run: cfg.Run}
		if cfg.Restore != nil {
			start.Restored = cfg.Restore.ID
		}
		if err := p.cfg.onStart(start); err != nil {
			close(end)
			failed := st
			failed.Ended, failed.State, failed.Error = time.Now(), "failed", err.Error()
			p.status.Store(&failed)
			return fmt.Errorf("job %q: %w", p.cfg.Name, err)
		}
	}
	rep, err := engine.Run(ctx, cfg)
	close(end)
	p.report.Store(rep)
	ended := st
	ended.Ended = time.Now()
	switch {
	case err == nil && rep.Stopped:
		ended.State = "stopped"
	case err == nil:
		ended.State = "finished"
	case ctx.Err() != nil:
		ended.State = "cancelled"
	default:
		ended.State, ended.Error = "failed", err.Error()
	}
	p.status.Store(&ended)
	if err != nil {
		return fmt.Errorf("job %q: %w", p.cfg.Name, err)
	}
	return nil
}

// Report returns what happened in the current or latest Run so far, or
// nil before the first. It is safe to call from any goroutine.
func (p *Pipeline) Report() *Report { return reportOf(p.engineReport()) }

// engineReport is Report in the engine's terms.
func (p *Pipeline) engineReport() *engine.Report {
	if r := p.report.Load(); r != nil && p.Status().State != "running" {
		return r
	}
	if l := p.live.Load(); l != nil {
		return l.Report()
	}
	return p.report.Load()
}
