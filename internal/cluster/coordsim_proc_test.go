package cluster_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/internal/cluster"
)

// The coordinator of a simulation (coordsim_test.go) runs in a process of
// its own, so that its CPU time is measured apart from the simulated
// workers': the test binary runs itself again with simStoreEnv set, and
// TestMain then runs simCoordinatorMain instead of the tests.
const (
	// simStoreEnv names the coordinator's store directory.
	simStoreEnv = "WEIR_COORDSIM_STORE"
	// simProfileEnv, if set, names a file for the coordinator's CPU
	// profile, written when it stops.
	simProfileEnv = "WEIR_COORDSIM_CPUPROFILE"
)

// simCoordinatorMain runs a coordinator as weir coordinator does, with
// its defaults (heartbeats every 500 ms, lost after 5 s), serving the sim
// job on a loopback port. It prints the port's address on stdout, logs on
// stderr, and stops when its stdin closes (its parent's end) or on
// SIGTERM. It returns the process's exit code.
func simCoordinatorMain(store string) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "sim coordinator: %v\n", err)
		return 1
	}
	if path := os.Getenv(simProfileEnv); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return fail(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	logf := func(l string) { fmt.Fprintln(os.Stderr, l) }
	c, err := cluster.NewCoordinator(ctx, cluster.CoordinatorConfig{Listen: "127.0.0.1:0", Store: store,
		Program: simProgram{store: store, log: logf}, Log: logf})
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	fmt.Println(c.Addr())
	go func() { // ends the process with its stdin: owned by the process
		io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	<-ctx.Done()
	return 0
}

// simProgram runs "sim": an unbounded source rebalanced into a sink, two
// tasks of the same parallelism, so that a job of n subtasks has
// parallelism n/2, checkpointing at least once every second into store.
// Its arguments: --parallelism N (default 1), --interval D (between
// checkpoints, default 1s), and --restore R as a resuming coordinator adds.
// The simulated workers run none of it: the coordinator only compiles it
// and drives its checkpoints.
type simProgram struct {
	store string
	log   func(string)
}

func (simProgram) Jobs() []string { return []string{"sim"} }

func (s simProgram) Open(_ context.Context, _, name string, args []string) (cluster.Pipeline, error) {
	parallelism, interval, restore := 1, time.Second, ""
	for i := 0; i+1 < len(args); i++ {
		var err error
		switch v := args[i+1]; args[i] {
		case "--parallelism":
			parallelism, err = strconv.Atoi(v)
		case "--interval":
			interval, err = time.ParseDuration(v)
		case "--restore":
			restore = v
		}
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", args[i], args[i+1], err)
		}
	}
	opts := []weir.Option{weir.WithName(name), weir.WithParallelism(parallelism), weir.WithMaxParallelism(max(128, parallelism)),
		weir.WithGuarantee(weir.AtLeastOnce), weir.WithLog(func(l string) { s.log(name + ": " + l) }),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: interval, StateDir: s.store, Log: true})}
	if restore != "" {
		opts = append(opts, weir.WithRestore(restore))
	}
	p := weir.NewPipeline(opts...)
	src := weir.FromSource(p, "numbers", generator.New(-1, func(i int64) int64 { return i }, generator.WithRate(1000)))
	weir.To(weir.Rebalance(src), "discard", connector.Sink[int64](discard{}))
	return pipeline{p}, nil
}

// discard is a sink that drops what it gets; no simulated worker opens it.
type discard struct{}

func (discard) Open(context.Context, connector.SubtaskInfo) (connector.Writer[int64], error) {
	return discard{}, nil
}
func (discard) Write(context.Context, []int64) error { return nil }
func (discard) Flush(context.Context) error          { return nil }
func (discard) Close() error                         { return nil }

// simCoordinator is a coordinator process of a simulation.
type simCoordinator struct {
	cmd   *exec.Cmd
	stdin io.Closer
	addr  string
	log   string // its stderr
}

// startSimCoordinator starts a coordinator process on store in dir,
// writing a CPU profile to profile if it is set, and waits until it
// serves.
func startSimCoordinator(dir, store, profile string) (*simCoordinator, error) {
	c := &simCoordinator{log: filepath.Join(dir, "coordinator.log")}
	logFile, err := os.Create(c.log)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the process holds its own descriptor
	c.cmd = exec.Command(os.Args[0], "-test.run=^$")
	c.cmd.Env = append(os.Environ(), simStoreEnv+"="+store, simProfileEnv+"="+profile)
	c.cmd.Stderr = logFile
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := c.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	c.stdin = stdin
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		c.stop()
		return nil, fmt.Errorf("the coordinator process did not start: %w (its log: %s)", err, c.tail())
	}
	c.addr = strings.TrimSpace(line)
	return c, nil
}

// stop ends the coordinator process and waits for it.
func (c *simCoordinator) stop() error {
	c.stdin.Close()
	return c.cmd.Wait()
}

// tail returns the end of the coordinator's log, for an error.
func (c *simCoordinator) tail() string {
	b, _ := os.ReadFile(c.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// cpu returns the CPU time the coordinator process used so far (user and
// system, from /proc; its resolution is the kernel's clock tick).
func (c *simCoordinator) cpu() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The command's name (field 2) may hold spaces; it ends at the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, errors.New("unexpected /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("unexpected /proc stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	const clockTick = 100 // USER_HZ, 100 on every Linux platform Go supports
	return time.Duration(utime+stime) * time.Second / clockTick, nil
}
