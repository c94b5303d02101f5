package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/weir-stream/weir/bench/loops"
	"github.com/weir-stream/weir/nexmark"
)

// measurement is one run's measured phase.
type measurement struct {
	events int64
	wall   time.Duration // of the measured phase
	cpu    time.Duration // the process's CPU time in the measured phase
	// processCPU is the child's whole CPU time (start-up and warm-up
	// included), from the kernel's accounting of the exited child.
	processCPU time.Duration
	// peakRSS is the child's peak resident set size, bytes.
	peakRSS int64
}

func (m measurement) perSecond() float64    { return float64(m.events) / m.wall.Seconds() }
func (m measurement) perCPUSecond() float64 { return float64(m.events) / m.cpu.Seconds() }

func (m measurement) String() string {
	return fmt.Sprintf("%d events in %v wall, %v CPU: %s events/s, %s per CPU-second (process CPU %v in all, peak RSS %s)",
		m.events, m.wall.Round(time.Millisecond), m.cpu.Round(time.Millisecond),
		millions(m.perSecond()), millions(m.perCPUSecond()), m.processCPU.Round(time.Millisecond), megabytes(m.peakRSS))
}

// engine is a runner command; the query flag is appended per run.
type engine struct {
	name string
	cmd  []string
}

// summary matches the line both runners print:
// "q5: 2000000 events after 1000000 warm-up, parallelism 2, 4100 ms wall, 7900 ms CPU: ..."
var summary = regexp.MustCompile(`^(q\d+): (\d+) events after \d+ warm-up, parallelism \d+, (\d+) ms wall, (\d+) ms CPU`)

// run runs the engine on query q in a fresh process.
func (e engine) run(ctx context.Context, q string, timeout time.Duration) (measurement, error) {
	args := append(append([]string(nil), e.cmd[1:]...), "--query", q)
	out, usage, err := runChild(ctx, timeout, e.cmd[0], args...)
	if err != nil {
		return measurement{}, err
	}
	m, err := parseSummary(out)
	m.processCPU, m.peakRSS = usage.cpu, usage.peakRSS
	return m, err
}

func parseSummary(out []byte) (measurement, error) {
	for _, line := range strings.Split(string(out), "\n") {
		s := summary.FindStringSubmatch(strings.TrimSpace(line))
		if s == nil {
			continue
		}
		n, _ := strconv.ParseInt(s[2], 10, 64)
		wall, _ := strconv.ParseInt(s[3], 10, 64)
		cpu, _ := strconv.ParseInt(s[4], 10, 64)
		if wall <= 0 || cpu <= 0 {
			return measurement{}, fmt.Errorf("measured phase too short to time: %s", line)
		}
		return measurement{events: n, wall: time.Duration(wall) * time.Millisecond, cpu: time.Duration(cpu) * time.Millisecond}, nil
	}
	return measurement{}, fmt.Errorf("no summary line in the output:\n%s", out)
}

// childUsage is what the kernel accounted to an exited child process.
type childUsage struct {
	cpu     time.Duration // user and system CPU time
	peakRSS int64         // peak resident set size, bytes (ru_maxrss)
}

// usageOf reads the usage of the exited process ps: from its rusage, in
// which Linux gives ru_maxrss in kilobytes (the child's VmHWM; for a
// child that started others and waited for them, the largest of theirs).
func usageOf(ps *os.ProcessState) childUsage {
	if ps == nil {
		return childUsage{}
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return childUsage{}
	}
	return childUsage{cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), peakRSS: ru.Maxrss * 1024}
}

// runChild runs a command to completion and returns its standard output
// and what the kernel accounted to it.
func runChild(ctx context.Context, timeout time.Duration, name string, args ...string) ([]byte, childUsage, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	usage := usageOf(cmd.ProcessState)
	if ctx.Err() == context.DeadlineExceeded {
		return nil, usage, fmt.Errorf("timed out after %v", timeout)
	}
	if err != nil {
		tail := stderr.String()
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return nil, usage, fmt.Errorf("%s: %w\n%s", name, err, tail)
	}
	return stdout.Bytes(), usage, nil
}

// loopChildArg makes this program run one loop instead of the comparison.
const loopChildArg = "-loop-child"

// runLoop runs query q's loop over n events in a child process (so that
// its memory and garbage collector start fresh, as the engines' do).
func runLoop(ctx context.Context, self, q string, n int64, generators int, timeout time.Duration) (measurement, error) {
	out, usage, err := runChild(ctx, timeout, self, loopChildArg, "-query", q, "-events", fmt.Sprint(n), "-generators", fmt.Sprint(generators))
	if err != nil {
		return measurement{}, err
	}
	m, err := parseSummary(out)
	m.processCPU, m.peakRSS = usage.cpu, usage.peakRSS
	return m, err
}

// runLoopChild is the child's side of runLoop: it times the whole loop,
// generating the events included, and prints the runners' summary line.
func runLoopChild(args []string) error {
	fs := flag.NewFlagSet("loop", flag.ContinueOnError)
	q := fs.String("query", "", "the query")
	n := fs.Int64("events", 0, "events")
	generators := fs.Int("generators", 100, "generators")
	if err := fs.Parse(args); err != nil {
		return err
	}
	l, ok := loops.Lookup(*q)
	if !ok {
		return fmt.Errorf("no loop for %q", *q)
	}
	cfg := nexmark.DefaultConfig()
	cfg.NumEvents = *n
	cfg.NumEventGenerators = *generators
	cpu0, t0 := cpuTime(), time.Now()
	rows, err := l.Count(cfg)
	if err != nil {
		return err
	}
	wall, cpu := time.Since(t0), cpuTime()-cpu0
	fmt.Printf("%s: %d events after 0 warm-up, parallelism 1, %d ms wall, %d ms CPU: %d rows\n",
		*q, *n, wall.Milliseconds(), cpu.Milliseconds(), rows)
	return nil
}

// cpuTime is this process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// describeMachine says what the comparison runs on and with which
// settings, for the table's header.
func describeMachine(ctx context.Context, o options) string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	javaVersion := "no Flink"
	if !o.noFlink {
		if out, err := exec.CommandContext(ctx, o.java, "-version").CombinedOutput(); err == nil {
			javaVersion = firstLine(string(out))
		}
	}
	load := ""
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	workload := fmt.Sprintf("%d events measured after %d warm-up events per run, %d generators, parallelism %d, exactly-once checkpoints every %v, %d runs per engine",
		o.events, o.warmup, o.generators, o.par, o.interval, o.runs)
	if l := o.latency; l != nil {
		workload = fmt.Sprintf("latency of a keyed count over %d keys, %v measured after %v warm-up per run, parallelism %d, exactly-once aligned checkpoints every %v, %d runs per engine and rate",
			l.keys, l.duration, l.warmup, o.par, o.interval, o.runs)
	}
	return fmt.Sprintf("machine: %d CPUs (%s), %s, %s, load average %s\nworkload: %s",
		runtime.NumCPU(), cpu, runtime.Version(), javaVersion, load, workload)
}
