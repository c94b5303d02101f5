package cli_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	weirapi "github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/internal/testenv"
)

// proc is a weir process of a test cluster. Its standard error is kept so
// that the test can wait for a line.
type proc struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error

	mu    sync.Mutex
	lines []string
	at    []time.Time   // when each line came
	seen  chan struct{} // closed and replaced on every new line
}

func start(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	return startWithEnv(t, name, nil, args...)
}

// startWithEnv is start with extra environment variables.
func startWithEnv(t *testing.T, name string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, name: name, cmd: exec.Command(weirBinary(t), args...), done: make(chan struct{}), seen: make(chan struct{})}
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdout = io.Discard
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.lines, p.at = append(p.lines, sc.Text()), append(p.at, time.Now())
			close(p.seen)
			p.seen = make(chan struct{})
			p.mu.Unlock()
		}
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.kill() })
	return p
}

// printedAt returns when the process printed its first line after the
// first from that matches re, if it did.
func (p *proc) printedAt(from int, re string) (time.Time, bool) {
	rx := regexp.MustCompile(re)
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := from; i < len(p.lines); i++ {
		if rx.MatchString(p.lines[i]) {
			return p.at[i], true
		}
	}
	return time.Time{}, false
}

// waitFor waits until the process printed a line matching re, and returns
// its submatches.
func (p *proc) waitFor(re string) []string {
	p.t.Helper()
	return p.waitFrom(0, re)
}

// mark returns the number of lines printed so far, for waitFrom.
func (p *proc) mark() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.lines)
}

// waitFrom is waitFor that looks only at lines after the first from.
func (p *proc) waitFrom(from int, re string) []string {
	p.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.After(90 * time.Second)
	for i := from; ; {
		p.mu.Lock()
		for ; i < len(p.lines); i++ {
			if m := rx.FindStringSubmatch(p.lines[i]); m != nil {
				p.mu.Unlock()
				return m
			}
		}
		seen := p.seen
		p.mu.Unlock()
		select {
		case <-seen:
		case <-p.done:
			p.t.Fatalf("%s exited (%v) before printing %q:\n%s", p.name, p.err, re, p.output())
		case <-deadline:
			p.dump()
			p.t.Fatalf("%s did not print %q:\n%s", p.name, re, p.output())
		}
	}
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

// stop freezes the process with SIGSTOP; kill still ends it.
func (p *proc) stop() {
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		p.t.Fatalf("stopping %s: %v", p.name, err)
	}
}

// kill ends the process with SIGKILL, as a machine failure would.
func (p *proc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// wait waits for the process to exit and returns its error.
func (p *proc) wait() error {
	select {
	case <-p.done:
	case <-time.After(3 * time.Minute):
		p.dump()
		p.t.Fatalf("%s did not exit:\n%s", p.name, p.output())
	}
	return p.err
}

// dump makes a process that hangs print every goroutine's stack to its
// output (SIGQUIT), and waits a little for it to exit.
func (p *proc) dump() {
	p.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
}

// testCluster is a coordinator and its workers, each a process.
type testCluster struct {
	t       *testing.T
	dir     string
	store   string
	addr    string
	coord   *proc
	workers map[string]*proc
	// replacement is the coordinator's --replacement-timeout.
	replacement string
	// flags go to every process: coordinator, workers and clients.
	flags []string
	// coordFlags go to the coordinator only.
	coordFlags []string
}

func newCluster(t *testing.T, workers int) *testCluster {
	return newClusterOn(t, workers, "")
}

// newClusterOn starts a cluster whose checkpoint store is store (a
// directory of the test's when empty).
func newClusterOn(t *testing.T, workers int, store string) *testCluster {
	c := &testCluster{t: t, dir: t.TempDir(), workers: map[string]*proc{}, store: store, replacement: "1m"}
	if c.store == "" {
		c.store = filepath.Join(c.dir, "store")
	}
	c.startCoordinator("127.0.0.1:0")
	for i := 1; i <= workers; i++ {
		c.startWorker(fmt.Sprintf("w%d", i))
	}
	return c
}

func (c *testCluster) startCoordinator(listen string) {
	c.coord = start(c.t, "coordinator", append([]string{"coordinator", "--listen", listen, "--checkpoint-store", c.store, "--replacement-timeout", c.replacement, "--heartbeat-timeout", "1s", "--heartbeat-interval", "100ms"}, append(c.coordFlags, c.flags...)...)...)
	c.addr = c.coord.waitFor(`listening on (\S+) `)[1]
}

// startWorker starts worker id with the cluster's flags and extra.
func (c *testCluster) startWorker(id string, extra ...string) *proc {
	w := start(c.t, id, append(append([]string{"worker", "--coordinator", c.addr, "--slots", "1", "--id", id}, c.flags...), extra...)...)
	w.waitFor("joined coordinator")
	c.workers[id] = w
	return w
}

// keycount is the job the cluster tests run: slow enough (by --rate) to
// be killed in the middle, small enough to end in seconds.
var keycount = []string{"keycount", "--events", "1500000", "--keys", "200", "--window", "100ms", "-p", "3"}

// reference runs the job in one process without failures.
func reference(t *testing.T, job []string) []string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "ref")
	args := append(append([]string{"run"}, job...), "--output", out, "--progress", "off")
	if res, err := exec.Command(weirBinary(t), args...).CombinedOutput(); err != nil {
		t.Fatalf("reference run: %v\n%s", err, res)
	}
	return lines(t, out)
}

// submit submits the job with exactly-once checkpoints every 500ms and
// returns the client process, which waits for the job to end, and the
// output directory.
func (c *testCluster) submit(job []string, extra ...string) (*proc, string) {
	out := filepath.Join(c.dir, "out")
	args := append(append(append([]string{"submit", "--coordinator", c.addr}, c.flags...), job...), "--output", out, "--guarantee", "exactly-once",
		"--checkpoint-interval", "500ms", "--log-checkpoints", "--rate", "300000", "--wait")
	return start(c.t, "submit", append(args, extra...)...), out
}

func (c *testCluster) check(client *proc, out string, ref []string) {
	c.t.Helper()
	if err := client.wait(); err != nil {
		c.t.Fatalf("the job did not finish: %v\nclient:\n%s\ncoordinator:\n%s", err, client.output(), c.coord.output())
	}
	if err := cli.VerifyLines(weirapi.ExactlyOnce, ref, lines(c.t, out)); err != nil {
		c.t.Fatalf("cluster output is not the failure-free output: %v\ncoordinator:\n%s", err, c.coord.output())
	}
}

func skipShort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of processes")
	}
}

// clusterTest is skipShort for a test that then runs in parallel with the
// package's other cluster tests (go test's -parallel of them at a time,
// GOMAXPROCS by default), after its sequential tests: a cluster test mostly
// waits for its processes, whose jobs --rate throttles (about a third of a
// core per test on a 2-core machine), so two of them side by side take
// little longer than one. Tests that set environment variables
// (t.Setenv, which the children inherit) call skipShort instead, and so
// do those whose outcome hinges on a window of time the processes must
// keep (a lease, the adoption of a running attempt, a frozen process
// against the heartbeat timeout): they run one at a time, first.
func clusterTest(t *testing.T) {
	skipShort(t)
	t.Parallel()
}

// A worker killed mid-run is lost; the job waits for a slot, a replacement
// joins, and the job restarts on it from the latest checkpoint. The output
// equals the failure-free output.
func TestClusterSurvivesAWorkerKill(t *testing.T) {
	clusterTest(t)
	ref := reference(t, keycount)
	c := newCluster(t, 3)
	client, out := c.submit(keycount)
	c.coord.waitFor(`checkpoint 2 completed`)
	c.workers["w2"].kill()
	c.coord.waitFor(`worker w2 lost`)
	c.startWorker("w4")
	c.coord.waitFor(`restarting in .* from checkpoint`)
	c.check(client, out, ref)
	if !strings.Contains(client.output(), "recovery 1: restored checkpoint") {
		t.Fatalf("no recovery from a checkpoint was reported:\n%s", client.output())
	}
}

// The kill lands while a checkpoint is in flight: that checkpoint never
// completes and the job restores the one before. The job needs all three
// workers' slots, so the killed worker runs some of its tasks; it is
// frozen (SIGSTOP) before the next checkpoint is triggered, so that
// checkpoint cannot complete before the kill.
func TestClusterSurvivesAKillDuringACheckpoint(t *testing.T) {
	clusterTest(t)
	ref := reference(t, keycount)
	for try := 1; ; try++ {
		if killDuringACheckpoint(t, ref) {
			return
		}
		if try == 3 {
			t.Fatal("in 3 tries the frozen worker was declared lost before the next checkpoint was triggered")
		}
	}
}

func killDuringACheckpoint(t *testing.T, ref []string) bool {
	c := newCluster(t, 3)
	client, out := c.submit(keycount)
	c.coord.waitFor(`checkpoint 2 completed`)
	victim := c.workers["w1"]
	from := c.coord.mark()
	victim.stop()
	m := c.coord.waitFrom(from, `checkpoint (\d+) triggered|worker \S+ lost|failure 1`)
	victim.kill()
	c.startWorker("w4")
	if !strings.Contains(m[0], "triggered") {
		t.Logf("the coordinator printed %q before the next checkpoint; trying again", m[0])
		c.check(client, out, ref)
		return false
	}
	inFlight := m[1]
	c.check(client, out, ref)
	if regexp.MustCompile(`checkpoint ` + inFlight + ` completed`).MatchString(c.coord.output()) {
		t.Fatalf("checkpoint %s, in flight when its worker was killed, completed:\n%s", inFlight, c.coord.output())
	}
	r := regexp.MustCompile(`recovery 1: restored checkpoint (\d+)`).FindStringSubmatch(client.output())
	if r == nil {
		t.Fatalf("no recovery from a checkpoint was reported:\n%s", client.output())
	}
	restored, _ := strconv.Atoi(r[1])
	if n, _ := strconv.Atoi(inFlight); restored >= n {
		t.Fatalf("recovery restored checkpoint %d, not one before checkpoint %s, which was in flight at the kill:\n%s", restored, inFlight, client.output())
	}
	return true
}

// Two workers die one after the other, the second while the job recovers
// from the first.
func TestClusterSurvivesTwoWorkerKills(t *testing.T) {
	clusterTest(t)
	ref := reference(t, keycount)
	c := newCluster(t, 3)
	client, out := c.submit(keycount)
	c.coord.waitFor(`checkpoint 2 completed`)
	c.workers["w1"].kill()
	c.startWorker("w4")
	c.coord.waitFor(`failure 1: .*restarting`)
	c.coord.waitFrom(c.coord.mark(), `checkpoint \d+ triggered`) // the restarted attempt runs
	c.workers["w2"].kill()
	c.startWorker("w5")
	c.check(client, out, ref)
	if !strings.Contains(client.output(), "recovery 2: restored checkpoint") {
		t.Fatalf("the second kill was not a second recovery:\n%s", client.output())
	}
}

// The coordinator is killed and started again on the same store and
// address: it resumes the job, the workers join it again with the tasks
// they kept running, which it adopts, and the client waiting for the job
// sees it finish.
func TestClusterSurvivesACoordinatorRestart(t *testing.T) {
	clusterTest(t)
	ref := reference(t, keycount)
	c := newCluster(t, 3)
	client, out := c.submit(keycount)
	c.coord.waitFor(`checkpoint 2 completed`)
	c.coord.kill()
	c.startCoordinator(c.addr)
	c.coord.waitFor(`resuming job keycount-1`)
	c.coord.waitFor(`job keycount-1: adopting its running attempt \(3 shares\)`)
	c.check(client, out, ref)
}

// A slow sink throttles the sources on other workers through the data
// plane's credit: the records read stay within the in-flight buffers of
// what the sinks wrote, and the workers' memory stays bounded.
func TestClusterBackpressureCrossesProcesses(t *testing.T) {
	clusterTest(t)
	c := newCluster(t, 2)
	out := filepath.Join(c.dir, "out")
	// One event per 1ms window: the sink receives as many rows as the
	// sources read.
	job := []string{"keycount", "--events", "1000000000", "--keys", "1000", "--tps", "1000", "--window", "1ms", "-p", "2",
		"--sink-delay", "20ms", "--output", out}
	sub := start(t, "submit", append([]string{"submit", "--coordinator", c.addr}, job...)...)
	if err := sub.wait(); err != nil {
		t.Fatalf("submit: %v\n%s", err, sub.output())
	}
	const id = "keycount-1"
	status := func() (read, written int64) {
		res, err := exec.Command(weirBinary(t), "status", "--coordinator", c.addr, id).CombinedOutput()
		if err != nil {
			t.Fatalf("status: %v\n%s", err, res)
		}
		m := regexp.MustCompile(`records read (\d+), written (\d+)`).FindSubmatch(res)
		if m == nil {
			t.Fatalf("status shows no record counts:\n%s", res)
		}
		fmt.Sscan(string(m[1]), &read)
		fmt.Sscan(string(m[2]), &written)
		return read, written
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if read, written := status(); written > 0 && read > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job wrote nothing:\n%s", c.coord.output())
		}
		time.Sleep(200 * time.Millisecond)
	}
	// An unthrottled source reads millions of records a second. With
	// credit, what the sources read beyond what the sinks wrote is bounded
	// by the buffers: per channel 8 batches of 32 KiB (about 3,000 events)
	// on 4 channels each way, the window state of one watermark interval,
	// and a heartbeat's lag on each count.
	const bound = 1_000_000
	var read, written int64
	for range 3 {
		time.Sleep(2 * time.Second)
		read, written = status()
		if read-written > bound {
			t.Fatalf("sources read %d records while sinks wrote %d: %d in flight, more than the buffers hold (%d)", read, written, read-written, bound)
		}
	}
	for id, w := range c.workers {
		if rss := rssMiB(t, w.cmd.Process.Pid); rss > 400 {
			t.Fatalf("worker %s uses %d MiB", id, rss)
		}
	}
	res, err := exec.Command(weirBinary(t), "cancel", "--coordinator", c.addr, id).CombinedOutput()
	if err != nil {
		t.Fatalf("cancel: %v\n%s", err, res)
	}
	c.coord.waitFor(id + ` cancelled`)
	t.Logf("after 6s: read %d, written %d", read, written)
}

// rssMiB returns a process's resident memory.
func rssMiB(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no VmRSS in /proc/%d/status", pid)
	}
	var kb int64
	fmt.Sscan(string(m[1]), &kb)
	return kb / 1024
}

// A worker that stops answering without closing its connections (a hung
// machine: SIGSTOP) is lost after the heartbeat timeout, and the job
// recovers without it.
func TestClusterLosesASilentWorkerByHeartbeatTimeout(t *testing.T) {
	clusterTest(t)
	ref := reference(t, keycount)
	c := newCluster(t, 4)
	client, out := c.submit(keycount)
	c.coord.waitFor(`checkpoint 2 completed`)
	w := c.workers["w2"]
	if err := w.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	c.coord.waitFor(`worker w2 lost: no heartbeat for`)
	c.check(client, out, ref)
}

// The processes share checkpoints through an S3-compatible object store
// (a real versitygw server): a worker killed mid-run, and the job restores
// from the bucket.
func TestClusterWithAnS3CheckpointStore(t *testing.T) {
	skipShort(t)
	endpoint := testenv.Require(t, "WEIR_S3_ENDPOINT")
	t.Setenv("AWS_ACCESS_KEY_ID", os.Getenv("WEIR_S3_ACCESS_KEY"))
	t.Setenv("AWS_SECRET_ACCESS_KEY", os.Getenv("WEIR_S3_SECRET_KEY"))
	store := fmt.Sprintf("s3://%s/%s?endpoint=%s", os.Getenv("WEIR_S3_BUCKET"), strings.ReplaceAll(t.Name(), "/", "-")+fmt.Sprint(time.Now().UnixNano()), endpoint)
	ref := reference(t, keycount)
	c := newClusterOn(t, 4, store)
	client, out := c.submit(keycount)
	c.coord.waitFor(`checkpoint 2 completed`)
	c.workers["w3"].kill()
	c.check(client, out, ref)
	if !strings.Contains(client.output(), "recovery 1: restored checkpoint") {
		t.Fatalf("no recovery from a checkpoint was reported:\n%s", client.output())
	}
}

// Parallel recovery: a worker is lost and none replaces it. After the
// replacement timeout the job spreads over the two survivors, each
// restoring its share of the lost worker's subtasks, and finishes with the
// failure-free output.
func TestClusterSpreadsOverSurvivorsWithoutAReplacement(t *testing.T) {
	clusterTest(t)
	ref := reference(t, keycount)
	c := &testCluster{t: t, dir: t.TempDir(), workers: map[string]*proc{}, replacement: "300ms"}
	c.store = filepath.Join(c.dir, "store")
	c.startCoordinator("127.0.0.1:0")
	for _, id := range []string{"w1", "w2", "w3"} {
		c.startWorker(id)
	}
	client, out := c.submit(keycount)
	c.coord.waitFor(`checkpoint 2 completed`)
	c.workers["w2"].kill()
	c.coord.waitFor(`spreading 3 slots over 2 workers`)
	c.check(client, out, ref)
}

// Passive standby: a passive standby worker takes no part in the first
// attempt but keeps the latest checkpoint's state loaded; when a worker is
// lost the restarted attempt is placed on it and restores from its memory,
// and the output equals the failure-free output.
func TestClusterPassiveStandby(t *testing.T) {
	clusterTest(t)
	ref := reference(t, keycount)
	c := newCluster(t, 3)
	sb := start(t, "standby", "worker", "--coordinator", c.addr, "--slots", "1", "--id", "standby", "--standby")
	sb.waitFor("joined coordinator")
	client, out := c.submit(keycount)
	sb.waitFor(`standby: loaded checkpoint 2 of keycount-1`)
	if strings.Contains(sb.output(), "attempt keycount-1") {
		t.Fatalf("the standby ran part of the first attempt:\n%s", sb.output())
	}
	c.workers["w1"].kill()
	sb.waitFor(`attempt keycount-1/\S+ running: restored \d+ bytes of state from the standby's memory`)
	c.check(client, out, ref)
}

// Killing a standby costs the running job nothing: it ran no task, so no
// attempt fails, and the output is the failure-free output.
func TestClusterStandbyKillLeavesTheJobRunning(t *testing.T) {
	clusterTest(t)
	ref := reference(t, keycount)
	c := newCluster(t, 3)
	sb := start(t, "standby", "worker", "--coordinator", c.addr, "--slots", "1", "--id", "standby", "--standby")
	sb.waitFor("joined coordinator")
	client, out := c.submit(keycount)
	sb.waitFor(`standby: loaded checkpoint 2 of keycount-1`)
	sb.kill()
	c.coord.waitFor(`worker standby lost`)
	c.check(client, out, ref)
	if strings.Contains(c.coord.output(), "failure 1:") {
		t.Fatalf("losing the standby failed an attempt:\n%s", c.coord.output())
	}
}

// Under the pebble state backend a passive standby fetches the shared
// state files of each completed checkpoint; when a worker is lost the
// restart placed on it restores, and the output equals the failure-free
// output.
func TestClusterPassiveStandbyFetchesPebbleFiles(t *testing.T) {
	skipShort(t)
	ref := reference(t, keycount)   // builds the weir binary, if no test did, before TMPDIR changes
	t.Setenv("TMPDIR", t.TempDir()) // the workers' local state directories, removed with the test
	c := newCluster(t, 3)
	sb := start(t, "standby", "worker", "--coordinator", c.addr, "--slots", "1", "--id", "standby", "--standby")
	sb.waitFor("joined coordinator")
	client, out := c.submit(keycount, "--state-backend", "pebble")
	sb.waitFor(`standby: fetched [1-9]\d* state files of checkpoint \d+ of keycount-1`)
	c.workers["w1"].kill()
	sb.waitFor(`attempt keycount-1/\S+ running: restored \d+ bytes of state from the standby's memory`)
	c.check(client, out, ref)
}
