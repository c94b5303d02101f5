package cli

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/weir-stream/weir"
)

// ftFlags are the fault-tolerance flags every job has.
type ftFlags struct {
	guarantee        string
	failover         string
	retainLimit      int64
	activeStandby    bool
	chaining         bool
	interval         time.Duration
	timeout          time.Duration
	minPause         time.Duration
	maxConcurrent    int
	tolerable        int
	retained         int
	stateDir         string
	restore          string
	savepointDir     string
	allowDrop        bool
	unaligned        bool
	alignedTimeout   time.Duration
	restart          string
	restartAttempts  int
	restartDelay     time.Duration
	restartMax       time.Duration
	restartInterval  time.Duration
	injectFailures   int
	failureSeed      uint64
	failAfterCkpt    bool
	verify           bool
	logCheckpoints   bool
	stallTimeout     time.Duration
	stateBackend     string
	stateLocalDir    string
	blockCache       int64
	stateIncremental bool
	memTables        int64
}

func (f *ftFlags) define(fs *pflag.FlagSet) {
	fs.StringVar(&f.guarantee, "guarantee", "none", "recovery semantics: exactly-once (failures invisible in the output), at-least-once (nothing lost, replays may repeat), at-most-once (nothing repeated, failures lose data) or none (a failure fails the job)")
	fs.StringVar(&f.failover, "failover", "global", "what restarts when a task fails: global (every task) or fine-grained (exactly-once and at-least-once: with aligned checkpoints the failed subtask alone, with upstream backup, plus the subtasks downstream of it when it cannot regenerate its output exactly, and on a cluster a lost worker's subtasks on another worker; with unaligned checkpoints, the failed task's pipelined region)")
	fs.Int64Var(&f.retainLimit, "retain-limit", 256<<20, "fine-grained failover: bytes of output each subtask retains for replay to a restarted consumer; past it the job falls back to a global rollback if a consumer fails before the next checkpoint (it bounds too the input a restarted subtask repeating its logged order holds)")
	fs.BoolVar(&f.activeStandby, "active-standby", false, "fine-grained failover with aligned checkpoints: run a standby instance of every task that reads inputs, has outputs and regenerates them exactly (in weir run in the same process, on a cluster on another worker); a failed task's standby takes its place, at about twice the task's cost")
	fs.BoolVar(&f.chaining, "chaining", true, "chain operators into one task where records can pass directly; --chaining=false makes every operator a task of its own (a stateful task then has an output of its own, and can have an active standby)")
	fs.DurationVar(&f.interval, "checkpoint-interval", time.Second, "time between checkpoints (exactly-once and at-least-once)")
	fs.DurationVar(&f.timeout, "checkpoint-timeout", 10*time.Minute, "abort a checkpoint not finished after this long")
	fs.DurationVar(&f.minPause, "checkpoint-min-pause", 0, "least time between the end of one checkpoint and the start of the next")
	fs.IntVar(&f.maxConcurrent, "max-concurrent-checkpoints", 1, "checkpoints in flight at once")
	fs.IntVar(&f.tolerable, "tolerable-checkpoint-failures", -1, "consecutive failed checkpoints that fail the job when exceeded (-1: never)")
	fs.IntVar(&f.retained, "retained-checkpoints", 3, "completed checkpoints kept in --state-dir")
	fs.StringVar(&f.stateDir, "state-dir", "", "where checkpoints go: a directory, file:///path, or s3://bucket/prefix?endpoint=URL with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (default: in memory, which survives failures only within this process)")
	fs.StringVar(&f.restore, "restore", "", `start from a checkpoint in --state-dir ("latest", or the path of a checkpoint directory or _metadata file) or from a savepoint (its directory); the parallelism and the operators may differ (state moves by operator uid and key group), --max-parallelism and the job's own flags may not`)
	fs.StringVar(&f.savepointDir, "savepoint-dir", "", "where savepoints go when the job receives SIGUSR1 or weir savepoint/weir stop names no --dir: a directory, file:///path or s3://bucket/prefix?endpoint=URL; each savepoint is a new directory in it that no retention deletes (default: none, SIGUSR1 then takes no savepoint)")
	fs.BoolVar(&f.allowDrop, "allow-non-restored-state", false, "with --restore: drop the state of operators the checkpoint or savepoint holds but this job no longer has (no operator with their uid); without it such a restore fails")
	fs.BoolVar(&f.unaligned, "unaligned", false, "take exactly-once checkpoints without barrier alignment, storing in-flight records with the snapshot")
	fs.DurationVar(&f.alignedTimeout, "aligned-timeout", 0, "switch an aligned checkpoint to unaligned at a task that waited this long for barriers (0: never)")
	fs.StringVar(&f.restart, "restart-strategy", "fixed-delay", "how a failed job restarts: fixed-delay, exponential-backoff, failure-rate or none")
	fs.IntVar(&f.restartAttempts, "restart-attempts", 10, "fixed-delay: restarts before giving up; failure-rate: failures tolerated per --restart-interval")
	fs.DurationVar(&f.restartDelay, "restart-delay", 100*time.Millisecond, "wait before a restart (the first wait for exponential-backoff)")
	fs.DurationVar(&f.restartMax, "restart-max-delay", 10*time.Second, "exponential-backoff: the longest wait")
	fs.DurationVar(&f.restartInterval, "restart-interval", time.Minute, "failure-rate: the window failures are counted in")
	fs.IntVar(&f.injectFailures, "inject-failures", 0, "kill this many tasks during the run, at random moments and at named points of the checkpoint protocol")
	fs.Uint64Var(&f.failureSeed, "failure-seed", 1, "seed of the injected failures' schedule")
	fs.BoolVar(&f.failAfterCkpt, "inject-after-checkpoint", false, "with --inject-failures: kills at random moments wait until a checkpoint has completed, so that their recoveries restore one (kills at named points are not held back)")
	fs.BoolVar(&f.logCheckpoints, "log-checkpoints", false, "print a line for every completed checkpoint")
	fs.DurationVar(&f.stallTimeout, "stall-timeout", weir.DefaultStallTimeout, "when the job makes no progress this long (no record moved, no checkpoint completed, no task finished or restarted), log what each task waits on and fail the attempt, which --restart-strategy recovers (0: never; with checkpoints at least twice --checkpoint-interval)")
	fs.StringVar(&f.stateBackend, "state-backend", "memory", "where keyed state lives: memory (Go maps) or pebble (an LSM store on local disk: state larger than memory, recovery from local files); both checkpoint incrementally, writing only what changed since the checkpoint before")
	fs.BoolVar(&f.stateIncremental, "state-incremental", true, "memory: checkpoints write the entries changed since the one before, in files the checkpoints share; false writes all the state at every checkpoint")
	fs.StringVar(&f.stateLocalDir, "state-local-dir", "", "pebble: the local directory of the stores and of the local copies of checkpointed files (default: a temporary directory of the process)")
	fs.Int64Var(&f.blockCache, "state-block-cache", 0, "pebble: bytes of block cache the stores of the process share (default: an eighth of the memory available, at most 1 GiB)")
	fs.Int64Var(&f.memTables, "state-memtables", 0, "pebble: bytes of memtables the stores of the process share (default: a sixteenth of the memory available, at most 256 MiB)")
	fs.BoolVar(&f.verify, "verify", false, "also run the job without failures and check the output against the guarantee; exit 1 on a violation (with exactly-once, every checkpoint is also checked to be a consistent cut, and the job fails on one that is not)")
}

// options returns the pipeline options the flags ask for.
func (f *ftFlags) options() ([]weir.Option, error) {
	g, err := weir.ParseGuarantee(f.guarantee)
	if err != nil {
		return nil, usagef("--guarantee: %v", err)
	}
	fo, err := weir.ParseFailover(f.failover)
	if err != nil {
		return nil, usagef("--failover: %v", err)
	}
	if f.interval <= 0 {
		return nil, usagef("--checkpoint-interval must be positive, got %v", f.interval)
	}
	if f.retainLimit <= 0 {
		return nil, usagef("--retain-limit must be positive, got %d", f.retainLimit)
	}
	if f.activeStandby && fo != weir.FineGrainedFailover {
		return nil, usagef("--active-standby needs --failover fine-grained")
	}
	if f.restore != "" && f.stateDir == "" && f.restore == "latest" {
		return nil, usagef("--restore latest needs --state-dir")
	}
	if f.stallTimeout < 0 {
		return nil, usagef("--stall-timeout must not be negative, got %v", f.stallTimeout)
	}
	if f.injectFailures < 0 {
		return nil, usagef("--inject-failures must not be negative")
	}
	if f.injectFailures > 0 && g == weir.None {
		return nil, usagef("--inject-failures with --guarantee none would just fail the job; choose a guarantee")
	}
	backend, err := weir.ParseStateBackend(f.stateBackend)
	if err != nil {
		return nil, usagef("--state-backend: %v", err)
	}
	if f.blockCache < 0 || f.memTables < 0 {
		return nil, usagef("--state-block-cache and --state-memtables must not be negative")
	}
	opts := []weir.Option{
		weir.WithGuarantee(g),
		weir.WithFailover(fo), weir.WithRetainLimit(f.retainLimit),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: f.interval, Timeout: f.timeout, MinPause: f.minPause,
			MaxConcurrent: f.maxConcurrent, TolerableFailures: f.tolerable, Retained: f.retained,
			StateDir: f.stateDir, Unaligned: f.unaligned, AlignedTimeout: f.alignedTimeout, Log: f.logCheckpoints,
			CheckConsistency: f.verify && g == weir.ExactlyOnce}),
		weir.WithRestartStrategy(f.restart, f.restartAttempts, f.restartDelay, f.restartMax, f.restartInterval),
		weir.WithStallTimeout(f.stallTimeout, nil),
		weir.WithStateBackend(weir.StateBackend{Name: backend, Dir: f.stateLocalDir, BlockCache: f.blockCache, MemTables: f.memTables, FullSnapshots: !f.stateIncremental}),
	}
	if f.activeStandby {
		opts = append(opts, weir.WithActiveStandby())
	}
	if !f.chaining {
		opts = append(opts, weir.WithChaining(false))
	}
	if f.restore != "" {
		opts = append(opts, weir.WithRestore(f.restore))
	}
	if f.allowDrop {
		opts = append(opts, weir.WithAllowNonRestoredState())
	}
	if f.injectFailures > 0 {
		opts = append(opts, weir.WithInjectedFailures(f.injectFailures, f.failureSeed))
		if f.failAfterCkpt {
			opts = append(opts, weir.WithFailuresAfterACheckpoint())
		}
	}
	return opts, nil
}
