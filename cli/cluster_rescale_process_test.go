package cli_test

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	weirapi "github.com/weir-stream/weir"
)

// rescaleJob runs weir rescale and returns the checkpoint it stopped the
// job at and restored, failing the test if it fails.
func (c *testCluster) rescaleJob(id string, p int) string {
	c.t.Helper()
	out := weirOut(c.t, "rescale", id, "--parallelism", strconv.Itoa(p), "--coordinator", c.addr)
	m := regexp.MustCompile(`^rescaled \S+ from parallelism \d+ to ` + strconv.Itoa(p) + ` at checkpoint (\d+) `).FindStringSubmatch(out)
	if m == nil {
		c.t.Fatalf("weir rescale printed %q", out)
	}
	return m[1]
}

// awaitRescaled waits until job id's run after a rescale to p restored
// checkpoint ck with its state moved and completed a checkpoint of its
// own and wrote its first record, and checks that weir status shows it at parallelism p.
func (c *testCluster) awaitRescaled(from int, id, ck string, p int) {
	c.t.Helper()
	c.coord.waitFrom(from, id+`: restoring checkpoint `+ck+`$`)
	c.coord.waitFrom(from, id+`: checkpoint `+ck+` ran operator .* with parallelism \d+, this run has `+strconv.Itoa(p)+`: its state moves by key group`)
	c.coord.waitFrom(from, id+`: checkpoint `+strconv.Itoa(atoi(c.t, ck)+1)+` completed`)
	c.coord.waitFrom(from, id+`: first record written \S+ after the rescale's stop`)
	if got := statusParallelism(c.t, c.addr, id); got != p {
		c.t.Fatalf("weir status shows job %s at parallelism %d after its rescale to %d", id, got, p)
	}
}

// statusParallelism returns the parallelism weir status shows for a
// job: the number of subtasks of its widest task.
func statusParallelism(t *testing.T, addr, id string) int {
	t.Helper()
	st := weirOut(t, "status", id, "--coordinator", addr)
	per := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^  subtask (\d+)\.(\d+) on`).FindAllStringSubmatch(st, -1) {
		per[m[1]]++
	}
	n := 0
	for _, k := range per {
		n = max(n, k)
	}
	return n
}

// A keycount job running at parallelism 2 on four worker processes is
// rescaled to 4 and then to 1 with weir rescale: each time it stops at a
// checkpoint whose sinks committed, and starts again under the same id
// restoring that checkpoint with its state moved by key group. The
// output is the failure-free run's, exactly once, and the job's report
// lists both rescales.
func TestClusterRescaleRunningJobTwiceIsExactlyOnce(t *testing.T) {
	clusterTest(t)
	job := append(slices.Clone(keycount[:len(keycount)-2]), "-p", "2")
	ref := reference(t, job)
	c := newCluster(t, 4)
	client, out := c.submit(job, "--rate", "100000") // slower, to be running still at both rescales
	id := c.coord.waitFor(`job (\S+) started`)[1]
	c.coord.waitFor(id + `: checkpoint 2 completed`)

	from := c.coord.mark()
	up := c.rescaleJob(id, 4)
	c.awaitRescaled(from, id, up, 4)
	from = c.coord.mark()
	down := c.rescaleJob(id, 1)
	c.awaitRescaled(from, id, down, 1)

	c.check(client, out, ref)
	for _, want := range []string{
		"rescale 1: parallelism 2 -> 4 at checkpoint " + up + ", paused",
		"rescale 2: parallelism 4 -> 1 at checkpoint " + down + ", paused",
	} {
		if !strings.Contains(client.output(), want) {
			t.Fatalf("the job's report does not say %q:\n%s", want, client.output())
		}
	}
	if strings.Contains(c.coord.output(), id+" stopped") {
		t.Fatalf("the job was recorded stopped by its rescale:\n%s", c.coord.output())
	}
}

// A keycount job at parallelism 2 on four worker processes has its
// counting task rescaled live to 4 with weir rescale --operator: nothing
// restarts, and weir status shows the task's four subtasks. A worker
// running some of them is then killed: the job restarts from its latest
// checkpoint at the rescaled parallelism, on a replacement worker. The
// output is the failure-free run's, exactly once, and the job's report
// lists the live rescale and the one recovery.
func TestClusterLiveRescaleThenAWorkerKillIsExactlyOnce(t *testing.T) {
	clusterTest(t)
	job := append(slices.Clone(keycount[:len(keycount)-2]), "-p", "2")
	ref := reference(t, job)
	c := newCluster(t, 4)
	client, out := c.submit(job, "--rate", "100000")
	id := c.coord.waitFor(`job (\S+) started`)[1]
	c.coord.waitFor(id + `: checkpoint 2 completed`)
	got := weirOut(t, "rescale", id, "--operator", "count", "-p", "4", "--coordinator", c.addr)
	m := regexp.MustCompile(`^rescaled "count -> format -> output" of \S+ from parallelism 2 to 4 live at checkpoint (\d+) \(\d+ subtasks replaced, paused \S+\)`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("weir rescale printed %q", got)
	}
	if got := statusParallelism(t, c.addr, id); got != 4 {
		t.Fatalf("weir status shows the job's widest task at parallelism %d after the live rescale to 4", got)
	}
	c.coord.waitFor(id + `: checkpoint ` + strconv.Itoa(atoi(t, m[1])+1) + ` completed`)
	if strings.Contains(c.coord.output(), id+": failure") {
		t.Fatalf("the job restarted at the live rescale:\n%s", c.coord.output())
	}
	c.workers["w3"].kill()
	c.coord.waitFor(`worker w3 lost`)
	c.startWorker("w5")
	c.coord.waitFor(id + `: failure 1: .* from checkpoint`)
	c.check(client, out, ref)
	for _, want := range []string{
		`rescale 1: task "count -> format -> output" parallelism 2 -> 4 live at checkpoint ` + m[1],
		"recovery 1: restored checkpoint",
	} {
		if !strings.Contains(client.output(), want) {
			t.Fatalf("the job's report does not say %q:\n%s", want, client.output())
		}
	}
}

// A stateful Nexmark query (q4: a join of auctions and bids in keyed
// state, then averages per category) on a cluster is rescaled from 2 to
// 4: its output is what a failure-free run writes, as the nexmark job's
// own check compares them.
func TestClusterRescaleNexmarkQ4(t *testing.T) {
	clusterTest(t)
	c, client, out, id, refDir := startNexmarkQ4(t, 20000)
	from := c.coord.mark()
	ck := c.rescaleJob(id, 4)
	c.awaitRescaled(from, id, ck, 4)
	if err := client.wait(); err != nil {
		t.Fatalf("the rescaled job did not finish: %v\n%s\ncoordinator:\n%s", err, client.output(), c.coord.output())
	}
	if err := nexmarkVerify(t)(weirapi.ExactlyOnce, lines(t, refDir), lines(t, out)); err != nil {
		t.Fatalf("q4 rescaled from 2 to 4 is not exactly-once: %v\ncoordinator:\n%s", err, c.coord.output())
	}
	if want := "rescale 1: parallelism 2 -> 4 at checkpoint " + ck; !strings.Contains(client.output(), want) {
		t.Fatalf("the job's report does not say %q:\n%s", want, client.output())
	}
}

// startNexmarkQ4 runs Nexmark q4 (200,000 events at parallelism 2) in
// this process for reference, then submits it to a new cluster of four
// workers at rate events per second and waits for its second
// checkpoint. It returns the cluster, the client, the job's output
// directory, its id and the reference's directory.
func startNexmarkQ4(t *testing.T, rate int) (*testCluster, *proc, string, string, string) {
	t.Helper()
	job := []string{"nexmark", "--query", "q4", "--events", "200000", "--tps", "200", "--generators", "10", "--watermark-interval", "1ms", "-p", "2"}
	refDir := filepath.Join(t.TempDir(), "ref")
	if code, _, stderr := weir(t, append(append([]string{"run"}, job...), "--output", refDir, "--progress", "off")...); code != 0 {
		t.Fatalf("reference run: exit %d\n%s", code, stderr)
	}
	c := newCluster(t, 4)
	client, out := c.submit(job, "--rate", strconv.Itoa(rate))
	id := c.coord.waitFor(`job (\S+) started`)[1]
	c.coord.waitFor(id + `: checkpoint 2 completed`)
	return c, client, out, id, refDir
}

// weirFails runs a weir client command that must fail with exit 1 (2
// for a usage error) and print want.
func weirFails(t *testing.T, want string, args ...string) {
	t.Helper()
	out, err := exec.Command(weirBinary(t), args...).CombinedOutput()
	if e, ok := err.(*exec.ExitError); !ok || (e.ExitCode() != 1 && e.ExitCode() != 2) || !strings.Contains(string(out), want) {
		t.Fatalf("weir %s: %v\n%s\nwant exit 1 or 2 saying %q", strings.Join(args, " "), err, out, want)
	}
}

// weir rescale refuses, saying why: an unknown job, a parallelism outside
// 1..max parallelism or equal to the job's, more slots than the job holds
// and the free ones, and a job that does not run; the refused rescales
// leave the job running at its parallelism.
func TestClusterRescaleRefusals(t *testing.T) {
	clusterTest(t)
	c := newCluster(t, 2)
	job := append(slices.Clone(keycount[:len(keycount)-2]), "-p", "2", "--events", "100000000")
	c.submit(job)
	id := c.coord.waitFor(`job (\S+) started`)[1]
	c.coord.waitFor(id + `: checkpoint 1 completed`)
	at := func(args ...string) []string { return append(args, "--coordinator", c.addr) }

	weirFails(t, `no job "nosuchjob-7"`, at("rescale", "nosuchjob-7", "--parallelism", "2")...)
	weirFails(t, "give the new parallelism with --parallelism N", at("rescale", id)...)
	weirFails(t, "parallelism 0 is outside 1..128 (the job's --max-parallelism)", at("rescale", id, "--parallelism", "0")...)
	weirFails(t, "parallelism 129 is outside 1..128 (the job's --max-parallelism)", at("rescale", id, "--parallelism", "129")...)
	weirFails(t, "job "+id+" already runs at parallelism 2", at("rescale", id, "-p", "2")...)
	weirFails(t, "job "+id+" needs 3 slots at parallelism 3: it holds 2 and 0 more are free", at("rescale", id, "-p", "3")...)
	if strings.Contains(c.coord.output(), "rescaling") {
		t.Fatalf("a refused rescale stopped the job:\n%s", c.coord.output())
	}
	if got := statusParallelism(t, c.addr, id); got != 2 {
		t.Fatalf("after the refused rescales weir status shows parallelism %d, want 2", got)
	}
	weirOut(t, at("cancel", id)...)
	c.coord.waitFor(id + ` cancelled`)
	weirFails(t, "job "+id+" is cancelled, not running", at("rescale", id, "-p", "1")...)
}

// A worker of the job is frozen while a rescale's stop is in flight, so
// the stop cannot complete; a second rescale meanwhile is refused. The
// frozen worker is then killed with SIGKILL: the job fails over, the
// restarted attempt serves the stop, and the rescale completes. The
// output is still the failure-free run's, exactly once.
func TestClusterRescaleSurvivesAWorkerKill(t *testing.T) {
	clusterTest(t)
	job := append(slices.Clone(keycount[:len(keycount)-2]), "-p", "2")
	ref := reference(t, job)
	c := newCluster(t, 4)
	client, out := c.submit(job, "--rate", "100000")
	id := c.coord.waitFor(`job (\S+) started`)[1]
	c.coord.waitFor(id + `: checkpoint 2 completed`)
	victim := c.workers["w1"] // slots are taken from the workers in the order of their ids
	victim.stop()
	from := c.coord.mark()
	rescale := start(t, "rescale", "rescale", id, "--parallelism", "3", "--coordinator", c.addr)
	c.coord.waitFrom(from, id+`: rescaling from parallelism 2 to 3: stopping at a checkpoint`)
	weirFails(t, "a rescale of job "+id+" is already under way", "rescale", id, "-p", "4", "--coordinator", c.addr)
	victim.kill()
	c.coord.waitFrom(from, `worker w1 lost`)
	if err := rescale.wait(); err != nil {
		t.Fatalf("weir rescale: %v\n%s\ncoordinator:\n%s", err, rescale.output(), c.coord.output())
	}
	ck := c.coord.waitFrom(from, id+`: rescaled from parallelism 2 to 3, restoring checkpoint (\d+)`)[1]
	c.awaitRescaled(from, id, ck, 3)
	c.check(client, out, ref)
	if want := "rescale 1: parallelism 2 -> 3 at checkpoint " + ck; !strings.Contains(client.output(), want) {
		t.Fatalf("the job's report does not say %q:\n%s", want, client.output())
	}
}

// A job submitted with --parallelism auto starts at the free slots, grows
// live when a worker joins (every task but its source takes the new
// slot while the job runs), and restarts at the remaining slots from its
// latest checkpoint when a worker is killed, without waiting for a
// replacement. The output is the failure-free run's, exactly once.
func TestClusterAutoParallelismFollowsTheWorkers(t *testing.T) {
	clusterTest(t)
	job := append(slices.Clone(keycount[:len(keycount)-2]), "-p", "2")
	ref := reference(t, job)
	c := &testCluster{t: t, dir: t.TempDir(), workers: map[string]*proc{}, replacement: "1m"}
	c.store = filepath.Join(c.dir, "store")
	c.coordFlags = []string{"--auto-rescale-delay", "300ms"}
	c.startCoordinator("127.0.0.1:0")
	c.startWorker("w1")
	c.startWorker("w2")
	auto := append(slices.Clone(keycount[:len(keycount)-2]), "-p", "auto")
	client, out := c.submit(auto, "--rate", "100000")
	id := c.coord.waitFor(`job (\S+): parallelism auto: 2 \(2 slots free\)`)[1]
	c.coord.waitFor(id + `: checkpoint 2 completed`)

	from := c.coord.mark()
	c.startWorker("w3")
	ck := c.coord.waitFrom(from, id+`: rescaled task "count -> format -> output" from parallelism 2 to 3 live at checkpoint (\d+)`)[1]
	if got := statusParallelism(t, c.addr, id); got != 3 {
		t.Fatalf("weir status shows the job's widest task at parallelism %d after the live rescale to 3", got)
	}
	c.coord.waitFrom(from, id+`: checkpoint `+strconv.Itoa(atoi(t, ck)+1)+` completed`)
	if strings.Contains(c.coord.output(), id+": failure") {
		t.Fatalf("the job restarted at the live rescale:\n%s", c.coord.output())
	}

	from = c.coord.mark()
	c.workers["w3"].kill()
	c.coord.waitFrom(from, id+`: workers left, 2 slots for the job: restarting at parallelism 2 from its latest checkpoint`)
	ck = c.coord.waitFrom(from, id+`: rescaled from parallelism 3 to 2, restoring checkpoint (\d+)`)[1]
	c.awaitRescaled(from, id, ck, 2)

	c.check(client, out, ref)
	for _, want := range []string{`rescale 1: task "count -> format -> output" parallelism 2 -> 3 live`, "cause: workers joined", "rescale 2: parallelism 3 -> 2", "cause: workers left"} {
		if !strings.Contains(client.output(), want) {
			t.Fatalf("the job's report does not say %q:\n%s", want, client.output())
		}
	}
}
