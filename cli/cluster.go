package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/cluster"
	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/transport"
)

func init() {
	addCommand(coordinatorCommand)
	addCommand(workerCommand)
	AddCommand(submitCommand)
	AddCommand(jobsCommand)
	AddCommand(cancelCommand)
}

const defaultCoordinator = "127.0.0.1:7070"

// securityFlags declares the flags of mutual TLS and the bearer token.
func securityFlags(fs *pflag.FlagSet, s *cluster.Security) {
	fs.StringVar(&s.CertFile, "tls-cert", "", "this process's certificate (PEM) for mutual TLS between all processes")
	fs.StringVar(&s.KeyFile, "tls-key", "", "the private key of --tls-cert")
	fs.StringVar(&s.CAFile, "tls-ca", "", "the CA certificate (PEM) that signed every process's certificate")
	fs.StringVar(&s.Token, "token", os.Getenv("WEIR_TOKEN"), "shared secret: every call to the coordinator must carry it as a bearer token, and every data plane connection between workers must prove it knows it (default $WEIR_TOKEN)")
}

func coordinatorFlag(fs *pflag.FlagSet, addr *string) {
	def := os.Getenv("WEIR_COORDINATOR")
	if def == "" {
		def = defaultCoordinator
	}
	fs.StringVar(addr, "coordinator", def, "the coordinator's address, or the comma-separated addresses of a leader and its standbys (default $WEIR_COORDINATOR or "+defaultCoordinator+")")
}

// logTo returns a log function, safe for concurrent use, that writes to
// w as who.
func logTo(w io.Writer, who string) func(string) {
	l := &lockedWriter{w: w}
	return func(line string) { fmt.Fprintf(l, "weir %s: %s %s\n", who, time.Now().Format("15:04:05.000"), line) }
}

func coordinatorCommand(stdout, stderr io.Writer, s *settings) *cobra.Command {
	var cfg cluster.CoordinatorConfig
	var stateDir, store, httpAddr string
	cmd := &cobra.Command{
		Use:   "coordinator --listen ADDR (--state-dir DIR | --checkpoint-store URL) [--http ADDR]",
		Short: "Start a cluster's coordinator",
		Long: `Start the coordinator of a cluster: workers join it, clients submit jobs to it,
and it places each job's subtasks on the workers' slots, drives checkpoints and
restarts jobs when a worker is lost. Checkpoints and the record of every job go
to the store, which all processes must reach: a directory on a shared
filesystem, or an S3-compatible bucket (s3://bucket/prefix?endpoint=URL). A
coordinator started again on the same store resumes the jobs that were running.

Each coordinator claims a leadership epoch in the store when it leads. A
coordinator started without --ha on the store of one that still runs
supersedes it: the older one commits nothing more and exits with an error
that names the newer epoch, and the newer one adopts the jobs' running tasks.

With --ha the coordinator is one of several on the store: it waits as a
standby until the leader's lease (--lease-period) expires or the leader hands
over (weir coordinator handover), then takes over without restarting any
task; after it lost the lead it waits as a standby again. Workers and
clients given every coordinator's address (--coordinator a,b) follow the
leader.

With --http ADDR the coordinator serves the dashboard (/), Prometheus metrics
(/metrics) and the JSON API (/api/v1/jobs) of every job of the cluster, as
weir run --http does for one job: the subtasks' metrics come from the
workers' heartbeats and carry the label worker, and /metrics adds the
coordinator's own (workers, slots, leadership epoch, jobs by state). A
standby serves it too, without jobs until it leads.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (stateDir == "") == (store == "") {
				return usagef("give the checkpoint store with exactly one of --state-dir and --checkpoint-store")
			}
			if cfg.LeasePeriod <= 0 {
				return usagef("--lease-period must be positive, got %v", cfg.LeasePeriod)
			}
			cfg.Store = stateDir + store
			cfg.Program = program{stdout, stderr, s}
			cfg.Log = logTo(stderr, "coordinator")
			return runCoordinator(cmd.Context(), cfg, httpAddr, stderr)
		},
	}
	cmd.AddCommand(handoverCommand(stdout, stderr))
	fs := cmd.Flags()
	fs.StringVar(&cfg.Listen, "listen", defaultCoordinator, "address of the control plane for workers and clients")
	fs.StringVar(&stateDir, "state-dir", "", "directory for checkpoints and job records, shared by every process")
	fs.StringVar(&store, "checkpoint-store", "", "checkpoint store URL: file:///path or s3://bucket/prefix?endpoint=URL (credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")
	fs.StringVar(&cfg.SavepointDir, "savepoint-dir", "", "where weir savepoint and weir stop --savepoint write savepoints without --dir: a directory every process reaches, file:///path or s3://bucket/prefix?endpoint=URL")
	fs.DurationVar(&cfg.HeartbeatInterval, "heartbeat-interval", 500*time.Millisecond, "how often workers report")
	fs.DurationVar(&cfg.HeartbeatTimeout, "heartbeat-timeout", 5*time.Second, "a worker silent this long is lost")
	fs.DurationVar(&cfg.ReplacementTimeout, "replacement-timeout", 10*time.Second, "how long a job that lost a worker waits for a replacement before it spreads the lost worker's subtasks over the remaining workers (negative: wait for free slots)")
	fs.BoolVar(&cfg.HA, "ha", false, "run as one of several coordinators on the store: wait as a standby until the leader's lease expires or it hands over, then take over without restarting the jobs' tasks")
	fs.DurationVar(&cfg.LeasePeriod, "lease-period", 3*time.Second, "a leader that did not renew its lease in the store for this long is replaced by a standby")
	fs.StringVar(&cfg.Advertise, "advertise", "", "the address workers and clients reach this coordinator at, which standbys name to them (default: the --listen address)")
	fs.DurationVar(&cfg.AdoptTimeout, "adopt-timeout", 0, "how long a coordinator that took over waits for the workers to report a job's running tasks before it restarts the job from its latest checkpoint (default: twice --heartbeat-timeout)")
	fs.DurationVar(&cfg.AutoRescaleDelay, "auto-rescale-delay", 2*time.Second, "how long a job submitted with --parallelism auto waits after workers joined or left, for no more to, before it rescales to the slots there are")
	fs.StringVar(&httpAddr, "http", "", "serve the dashboard (/), Prometheus metrics (/metrics) and the JSON API (/api/v1/jobs) of every job of the cluster on this address, e.g. 127.0.0.1:8081 (default: off)")
	securityFlags(fs, &cfg.Security)
	return cmd
}

// runCoordinator runs a coordinator until ctx ends; with --ha, one that
// lost the lead (superseded or handed over) waits as a standby again.
// With httpAddr it serves the dashboard of the coordinator that runs, from
// before the first claims the store: a bad address claims nothing.
func runCoordinator(ctx context.Context, cfg cluster.CoordinatorConfig, httpAddr string, stderr io.Writer) error {
	var current atomic.Pointer[cluster.Coordinator]
	if httpAddr != "" {
		stop, err := serveCoordinator(ctx, current.Load, httpAddr, cfg.SavepointDir, stderr)
		if err != nil {
			return err
		}
		defer stop()
	}
	for {
		c, err := cluster.NewCoordinator(ctx, cfg)
		if err != nil {
			return err
		}
		current.Store(c)
		role := "leading"
		if cfg.HA {
			role = "standby until it leads"
		}
		fmt.Fprintf(stderr, "weir coordinator: listening on %s (%s), store %s\n", c.Addr(), role, cfg.Store)
		select {
		case <-ctx.Done():
		case <-c.Done():
		}
		current.Store(nil)
		c.Close()
		err = c.Deposed()
		if ctx.Err() != nil || !cfg.HA || !(errors.Is(err, cluster.ErrDeposed) || errors.Is(err, cluster.ErrHandedOver)) {
			return err // superseded by a coordinator started later on the store, or it could not lead
		}
		cfg.Listen = c.Addr() // the address workers and clients know
	}
}

func handoverCommand(stdout, stderr io.Writer) *cobra.Command {
	var c client
	cmd := &cobra.Command{
		Use:   "handover --coordinator ADDR,ADDR...",
		Short: "Make the leading coordinator hand over to a standby",
		Long: `Ask the leading coordinator among --coordinator to stop leading and release its
lease, so that a standby (weir coordinator --ha) takes over at once. The jobs'
tasks keep running: the new leader adopts them. Refused when no coordinator of
the list is a standby to take over. Prints the new leader's address.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return handover(cmd.Context(), &c, stdout, stderr)
		},
	}
	c.define(cmd.Flags())
	return cmd
}

func workerCommand(stdout, stderr io.Writer, s *settings) *cobra.Command {
	var cfg cluster.WorkerConfig
	var coordinators, cpuProfile, compression string
	var cpus int
	cmd := &cobra.Command{
		Use:   "worker --coordinator ADDR --slots N [--listen ADDR] [--cpus N]",
		Short: "Start a worker and join a coordinator",
		Long: `Start a worker: it joins the coordinator, runs the subtasks the coordinator
places on its slots and exchanges records with other workers over its data
plane (--listen). One slot runs subtask i of every operator of a job, so a job
of parallelism p takes p slots. A worker that loses the coordinator keeps its
tasks running and looks for the leader among --coordinator, which adopts
them; tasks no coordinator adopted within --grace are cancelled.

--cpus N caps the cores the worker's goroutines run on at once (Go's
GOMAXPROCS). By default a worker uses every core of its machine, or its
container's CPU limit; when several workers share a machine without such
limits, give each its share (e.g. two workers on 8 cores: --cpus 4), or
their threads contend for the same cores and every one of them runs slower.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.Slots < 1 {
				return usagef("--slots must be at least 1, got %d", cfg.Slots)
			}
			if cpus < 0 {
				return usagef("--cpus must be at least 1 (or 0 for every core), got %d", cpus)
			}
			if cpus > 0 {
				runtime.GOMAXPROCS(cpus)
			}
			if cfg.Coordinators = cluster.ParseAddrs(coordinators); len(cfg.Coordinators) == 0 {
				return usagef("--coordinator names no address")
			}
			var err error
			if cfg.Compression, err = transport.ParseCompression(compression); err != nil {
				return usagef("--exchange-compression: %v", err)
			}
			cfg.Program = program{stdout, stderr, s}
			cfg.Log = logTo(stderr, "worker")
			stop, err := startCPUProfile(cpuProfile)
			if err != nil {
				return err
			}
			w, err := cluster.NewWorker(cfg)
			if err != nil {
				stop()
				return err
			}
			defer w.Close()
			defer stop()
			fmt.Fprintf(stderr, "weir worker: data plane on %s, %d slots on %d cores, joining %s\n", w.DataAddr(), cfg.Slots, runtime.GOMAXPROCS(0), strings.Join(cfg.Coordinators, ","))
			err = w.Run(cmd.Context())
			printDataStats(stderr, w.DataStats(), cfg.Compression)
			return err
		},
	}
	fs := cmd.Flags()
	coordinatorFlag(fs, &coordinators)
	fs.DurationVar(&cfg.Grace, "grace", 30*time.Second, "how long the worker's tasks run on without a coordinator, for a new leader to adopt them (negative: cancel them at once)")
	fs.IntVar(&cfg.Slots, "slots", 1, "subtasks of each operator this worker runs at once")
	fs.IntVar(&cpus, "cpus", 0, "cores the worker runs on at once (GOMAXPROCS; 0: every core of the machine or the container's CPU limit)")
	fs.StringVar(&cfg.Listen, "listen", "127.0.0.1:0", "address of the data plane (port 0 picks a free one)")
	fs.StringVar(&cfg.Advertise, "advertise", "", "address other workers reach the data plane at (default: the --listen address)")
	fs.StringVar(&cfg.ID, "id", "", "the worker's name (default host-pid)")
	fs.BoolVar(&cfg.PassiveStandby, "standby", false, "be a passive standby: take only restarted attempts, and keep the state of every job's latest checkpoint loaded so that a restart placed here reads none from the store")
	fs.StringVar(&compression, "exchange-compression", "none", "compress the record batches this worker sends to other workers: "+transport.Compressions+" (lz4: cheap, zstd: fewer bytes for more CPU); batches under 1 KiB go as they are, and receivers read any")
	fs.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the worker to FILE until it stops (go tool pprof FILE)")
	securityFlags(fs, &cfg.Security)
	return cmd
}

// printDataStats writes what a worker's data plane sent, as it stops.
func printDataStats(w io.Writer, s transport.Stats, c transport.Compression) {
	if s.Batches == 0 {
		return
	}
	fmt.Fprintf(w, "weir worker: data plane sent %d bytes: %d batches of %d bytes of records, %d of them compressed (%s)\n",
		s.Bytes, s.Batches, s.RecordBytes, s.Compressed, c)
}

// client holds the flags of the commands that call the coordinator.
type client struct {
	addr string
	sec  cluster.Security
}

func (c *client) define(fs *pflag.FlagSet) {
	coordinatorFlag(fs, &c.addr)
	securityFlags(fs, &c.sec)
}

func (c *client) call(ctx context.Context, f func(context.Context, pb.CoordinatorClient) error) error {
	return c.callWithin(ctx, 30*time.Second, f)
}

// callWithin calls f on the leading coordinator, within timeout.
func (c *client) callWithin(ctx context.Context, timeout time.Duration, f func(context.Context, pb.CoordinatorClient) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, addr, err := cluster.DialLeader(ctx, c.sec, cluster.ParseAddrs(c.addr))
	if err != nil {
		return fmt.Errorf("coordinator %s: %w", c.addr, err)
	}
	defer conn.Close()
	if err := f(ctx, pb.NewCoordinatorClient(conn)); err != nil {
		return fmt.Errorf("coordinator %s: %w", addr, err)
	}
	return nil
}

func submitCommand(stdout, stderr io.Writer) *cobra.Command {
	var c client
	var wait bool
	var from, httpAddr string
	var sqlFiles []string
	cmd := &cobra.Command{
		Use:   "submit [--coordinator ADDR] (JOB | --sql FILE...) [job flags] [--from-savepoint PATH] [--wait] [--http ADDR]",
		Short: "Run a job on a cluster",
		Long: `Submit a job to a cluster's coordinator and print its id. The job's flags are
those of weir run JOB (see weir run JOB --help); without --state-dir the job
checkpoints into the coordinator's store. --from-savepoint PATH starts the job
from a savepoint (weir savepoint, weir stop --savepoint), as --restore PATH
does. With --wait, wait for the job to end and exit 0 if it finished or
stopped, 1 otherwise.

--parallelism auto (or -p auto) starts the job at the number of free slots
(at most its --max-parallelism) and has it follow the slots the workers have:
when workers join it rescales up (weir rescale) once none joined for the
coordinator's --auto-rescale-delay, and when workers leave it starts again at
the slots that remain from its latest checkpoint rather than wait for
replacements. Each change is a restart of the whole job at a checkpoint.

The dashboard of every job of a cluster is the coordinator's (weir
coordinator --http ADDR). With --http ADDR, weir submit serves on ADDR the
dashboard, metrics and JSON API of the job it submitted, as weir run --http
does, read from the coordinator through its control plane (and so with its
--token and TLS), and waits for the job to end as with --wait.

weir submit sql -f FILE [--var NAME=VALUE] [job flags] submits a SQL script
as weir sql runs it; the script's text travels with the job (each -f FILE
becomes --execute TEXT), so the workers need not see the file. --sql FILE
is the same: weir submit --sql FILE -- [weir sql flags].`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && len(sqlFiles) == 0 {
				return usagef("name a job, or a SQL script with --sql FILE")
			}
			var job string
			var jobArgs []string
			if len(sqlFiles) > 0 {
				job, jobArgs = "sql", args
				for i := len(sqlFiles) - 1; i >= 0; i-- {
					text, err := os.ReadFile(sqlFiles[i])
					if err != nil {
						return usagef("--sql: %v", err)
					}
					jobArgs = append([]string{"--execute", string(text)}, jobArgs...)
				}
			} else {
				job, jobArgs = args[0], args[1:]
			}
			if job == "sql" {
				var err error
				if jobArgs, err = inlineSQLFiles(jobArgs); err != nil {
					return err
				}
			}
			if i := slices.Index(jobArgs, "--wait"); i >= 0 {
				wait = true
				jobArgs = slices.Delete(jobArgs, i, i+1)
			}
			jobArgs, addr, err := takeFlag(jobArgs, "http")
			if err != nil {
				return err
			}
			if addr != "" {
				httpAddr = addr
			}
			if jobArgs, err = fromSavepoint(jobArgs, from); err != nil {
				return err
			}
			show := func(string) {}
			if httpAddr != "" {
				var stop func()
				if show, stop, err = serveSubmitted(cmd.Context(), &c, httpAddr, stderr); err != nil {
					return err
				}
				defer stop()
				wait = true
			}
			var info *pb.JobInfo
			err = c.call(cmd.Context(), func(ctx context.Context, cc pb.CoordinatorClient) (err error) {
				info, err = cc.Submit(ctx, &pb.SubmitRequest{Job: job, Args: jobArgs})
				return err
			})
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, info.Id)
			show(info.Id)
			if !wait {
				return nil
			}
			return waitJob(cmd.Context(), &c, info.Id, stderr)
		},
	}
	fs := cmd.Flags()
	fs.SetInterspersed(false) // flags after JOB are the job's
	c.define(fs)
	fs.BoolVar(&wait, "wait", false, "wait for the job to end")
	fs.StringVar(&httpAddr, "http", "", "serve the submitted job's dashboard (/), Prometheus metrics (/metrics) and JSON API (/api/v1/jobs) on this address, read from the coordinator, until the job ends (implies --wait; the coordinator's own --http serves every job)")
	fs.StringVar(&from, "from-savepoint", "", "start the job from the savepoint at PATH (the same as the job flag --restore PATH)")
	fs.StringArrayVar(&sqlFiles, "sql", nil, "submit the SQL script in FILE (repeatable; read in order) as the job sql, as weir sql -f FILE runs it")
	return cmd
}

// inlineSQLFiles replaces each -f FILE (--file FILE, --file=FILE) of a
// sql job's arguments by --execute with the file's text.
func inlineSQLFiles(args []string) ([]string, error) {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		var file string
		switch {
		case a == "-f" || a == "--file":
			if i+1 == len(args) {
				return nil, usagef("%s needs a file", a)
			}
			file = args[i+1]
			i++
		case strings.HasPrefix(a, "--file="), strings.HasPrefix(a, "-f="):
			_, file, _ = strings.Cut(a, "=")
		default:
			out = append(out, a)
			continue
		}
		text, err := os.ReadFile(file)
		if err != nil {
			return nil, usagef("%s: %v", a, err)
		}
		out = append(out, "--execute", string(text))
	}
	return out, nil
}

// takeFlag removes --name VALUE or --name=VALUE from args and returns
// the rest and VALUE ("" if args have no such flag).
func takeFlag(args []string, name string) (rest []string, value string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--"+name:
			if i+1 == len(args) {
				return nil, "", usagef("--%s needs a value", name)
			}
			return append(slices.Clone(args[:i]), args[i+2:]...), args[i+1], nil
		case strings.HasPrefix(a, "--"+name+"="):
			return append(slices.Clone(args[:i]), args[i+1:]...), strings.TrimPrefix(a, "--"+name+"="), nil
		}
	}
	return args, "", nil
}

// fromSavepoint turns --from-savepoint PATH, given to submit (from) or
// among the job's flags, into the job flag --restore PATH, which takes a
// savepoint's path as well as a checkpoint's. It refuses two savepoints
// or a savepoint and --restore.
func fromSavepoint(jobArgs []string, from string) ([]string, error) {
	var out []string
	for i := 0; i < len(jobArgs); i++ {
		a := jobArgs[i]
		switch {
		case a == "--from-savepoint":
			if i+1 == len(jobArgs) {
				return nil, usagef("submit: --from-savepoint needs a path")
			}
			i++
			a = "--from-savepoint=" + jobArgs[i]
			fallthrough
		case strings.HasPrefix(a, "--from-savepoint="):
			if from != "" {
				return nil, usagef("submit: --from-savepoint given twice")
			}
			from = strings.TrimPrefix(a, "--from-savepoint=")
		default:
			out = append(out, a)
		}
	}
	if from == "" {
		return jobArgs, nil
	}
	if slices.ContainsFunc(out, func(a string) bool { return a == "--restore" || strings.HasPrefix(a, "--restore=") }) {
		return nil, usagef("submit: give --from-savepoint or --restore, not both")
	}
	return append(out, "--restore", from), nil
}

// retryable says whether a call that failed with code may succeed when
// made again: the coordinator was unreachable or a standby (Unavailable),
// or was superseded (Aborted) and the leader is another.
func retryable(code codes.Code) bool { return code == codes.Unavailable || code == codes.Aborted }

// waitJob polls a job until it ends.
// An unreachable coordinator (restarting, say), or one superseded by
// another (which the next call finds), is retried for a minute.
func waitJob(ctx context.Context, c *client, id string, stderr io.Writer) error {
	last := ""
	var unreachable time.Time
	for {
		var info *pb.JobInfo
		err := c.call(ctx, func(ctx context.Context, cc pb.CoordinatorClient) (err error) {
			info, err = cc.GetJob(ctx, &pb.GetJobRequest{Id: id})
			return err
		})
		switch {
		case retryable(status.Code(errors.Unwrap(err))) && (unreachable.IsZero() || time.Since(unreachable) < time.Minute):
			if unreachable.IsZero() {
				unreachable = time.Now()
				fmt.Fprintf(stderr, "weir: coordinator unreachable, retrying: %v\n", err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Second):
			}
			continue
		case err != nil:
			return err
		}
		unreachable = time.Time{}
		if now := info.State + " " + info.Detail; now != last {
			fmt.Fprintf(stderr, "weir: job %s %s\n", id, strings.TrimSpace(now))
			last = now
		}
		if info.State == cluster.Finished || info.State == cluster.Stopped || info.State == cluster.Failed || info.State == cluster.Cancelled {
			var rep weir.Report
			if len(info.Report) > 0 && json.Unmarshal(info.Report, &rep) == nil {
				printReport(stderr, &rep)
			}
		}
		switch info.State {
		case cluster.Finished, cluster.Stopped:
			return nil
		case cluster.Failed:
			return fmt.Errorf("job %s failed: %s", id, info.Error)
		case cluster.Cancelled:
			return fmt.Errorf("job %s was cancelled", id)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
	}
}

func jobsCommand(stdout, _ io.Writer) *cobra.Command {
	var c client
	cmd := &cobra.Command{
		Use:   "jobs [--coordinator ADDR]",
		Short: "List a cluster's jobs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listClusterJobs(cmd.Context(), &c, stdout)
		},
	}
	c.define(cmd.Flags())
	return cmd
}

// listClusterJobs prints one line per job the coordinator knows.
func listClusterJobs(ctx context.Context, c *client, stdout io.Writer) error {
	return c.call(ctx, func(ctx context.Context, cc pb.CoordinatorClient) error {
		r, err := cc.ListJobs(ctx, &pb.ListJobsRequest{})
		if err != nil {
			return err
		}
		for _, j := range r.Jobs {
			fmt.Fprintf(stdout, "%-24s %-10s %s %s\n", j.Id, j.State, time.UnixMilli(j.SubmittedUnixMs).Format(time.RFC3339), j.Detail)
		}
		return nil
	})
}

func cancelCommand(stdout, _ io.Writer) *cobra.Command {
	var c client
	cmd := &cobra.Command{
		Use:   "cancel [--coordinator ADDR] JOB",
		Short: "Cancel a job running on a cluster",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.call(cmd.Context(), func(ctx context.Context, cc pb.CoordinatorClient) error {
				info, err := cc.CancelJob(ctx, &pb.GetJobRequest{Id: args[0]})
				if err == nil {
					fmt.Fprintf(stdout, "cancelling %s\n", info.Id)
				}
				return err
			})
		},
	}
	c.define(cmd.Flags())
	return cmd
}

// printClusterJob prints what the coordinator knows of a job.
func printClusterJob(w io.Writer, j *pb.JobInfo) {
	fmt.Fprintf(w, "job %s (%s): %s, submitted %s\n", j.Id, j.Job, j.State, time.UnixMilli(j.SubmittedUnixMs).Format(time.RFC3339))
	if j.Guarantee != "" {
		fmt.Fprintf(w, "  %s, %s failover\n", j.Guarantee, j.Failover)
	}
	if j.Detail != "" {
		fmt.Fprintf(w, "  %s\n", j.Detail)
	}
	if j.Error != "" {
		fmt.Fprintf(w, "  error: %s\n", j.Error)
	}
	fmt.Fprintf(w, "  records read %d, written %d (this attempt)\n", j.RecordsRead, j.RecordsWritten)
	for _, wt := range j.Workers {
		var ids []string
		for _, s := range wt.Subtasks {
			ids = append(ids, fmt.Sprintf("%d.%d", s.Vertex, s.Subtask))
		}
		slices.Sort(ids)
		fmt.Fprintf(w, "  worker %s runs subtasks %s\n", wt.WorkerId, strings.Join(ids, " "))
	}
	for _, c := range j.Subtasks {
		if !c.Reported {
			fmt.Fprintf(w, "  subtask %d.%d on %s: not reported yet\n", c.Subtask.GetVertex(), c.Subtask.GetSubtask(), c.WorkerId)
			continue
		}
		fmt.Fprintf(w, "  subtask %d.%d on %s: in %d, out %d\n", c.Subtask.GetVertex(), c.Subtask.GetSubtask(), c.WorkerId, c.RecordsIn, c.RecordsOut)
	}
	var rep weir.Report
	if len(j.Report) > 0 && json.Unmarshal(j.Report, &rep) == nil {
		printReport(w, &rep)
	}
}
