package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	weirapi "github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
)

// weirOut runs a weir client command and returns what it printed on
// standard output, failing the test if it fails.
func weirOut(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(weirBinary(t), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("weir %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// A job on a cluster of two worker processes writes a savepoint while it
// runs, then stops with another: the stop ends the job only once its
// sinks committed the savepoint (no pre-committed file is left), and the
// job submitted again from that savepoint at another parallelism
// completes the output exactly once, also when the coordinator restarts
// meanwhile: it resumes the job from the job's own latest checkpoint,
// not from the savepoint again (whose restore would repeat the output
// committed since).
func TestClusterSavepointStopAndResubmitFromSavepoint(t *testing.T) {
	clusterTest(t)
	job := append(slices.Clone(keycount[:len(keycount)-2]), "-p", "2")
	ref := reference(t, job)
	c := &testCluster{t: t, dir: t.TempDir(), workers: map[string]*proc{}, replacement: "1m"}
	c.store = filepath.Join(c.dir, "store")
	savepoints := filepath.Join(c.dir, "savepoints")
	c.coordFlags = []string{"--savepoint-dir", savepoints}
	c.startCoordinator("127.0.0.1:0")
	c.startWorker("w1")
	c.startWorker("w2")

	client, out := c.submit(job, "--rate", "100000") // slower, to be running still at the stop
	id := c.coord.waitFor(`job (\S+) started`)[1]
	c.coord.waitFor(`checkpoint 2 completed`)
	sp := weirOut(t, "savepoint", id, "--coordinator", c.addr)
	if !strings.HasPrefix(sp, savepoints+"/") {
		t.Fatalf("weir savepoint printed %q, want a path under the coordinator's --savepoint-dir %s", sp, savepoints)
	}
	if _, err := os.Stat(filepath.Join(sp, "_savepoint")); err != nil {
		t.Fatalf("the savepoint weir savepoint printed has no metadata: %v", err)
	}

	stopDir := filepath.Join(c.dir, "stop")
	stop := weirOut(t, "stop", id, "--savepoint", "--coordinator", c.addr, "--dir", stopDir)
	if _, err := os.Stat(filepath.Join(stop, "_savepoint")); err != nil || !strings.HasPrefix(stop, stopDir+"/") {
		t.Fatalf("weir stop --savepoint printed %q (%v), want a savepoint under --dir %s", stop, err, stopDir)
	}
	if err := client.wait(); err != nil {
		t.Fatalf("the client waiting for the stopped job: %v\n%s", err, client.output())
	}
	if st := weirOut(t, "status", id, "--coordinator", c.addr); !strings.Contains(st, id+" (keycount): stopped") {
		t.Fatalf("weir status after the stop:\n%s", st)
	}
	out2, err := exec.Command(weirBinary(t), "savepoint", id, "--coordinator", c.addr).CombinedOutput()
	if e, ok := err.(*exec.ExitError); !ok || e.ExitCode() != 1 || !strings.Contains(string(out2), "job "+id+" is stopped, not running") {
		t.Fatalf("weir savepoint of the stopped job: %v\n%s\nwant exit 1 saying it is not running", err, out2)
	}
	files, _ := filepath.Glob(filepath.Join(out, ".*.pending"))
	if len(files) > 0 {
		t.Fatalf("the job stopped before its sinks committed the savepoint: pre-committed files %v", files)
	}
	before := lines(t, out)
	if len(before) == 0 || len(before) >= len(ref) {
		t.Fatalf("the stopped job wrote %d of %d lines, want some but not all", len(before), len(ref))
	}

	c.startWorker("w3") // -p 3 takes a third slot
	resumed := append(slices.Clone(keycount[:len(keycount)-2]), "-p", "3")
	client, out = c.submit(resumed, "--from-savepoint", stop, "--rate", "100000")
	id = c.coord.waitFrom(c.coord.mark(), `job (\S+) started`)[1]
	saved := c.coord.waitFor(id + `: restoring savepoint \S+ \(of checkpoint (\d+)`)[1]
	own := c.coord.waitFor(id + `: checkpoint (\d+) completed`)[1]
	c.coord.kill()
	c.startCoordinator(c.addr)
	c.coord.waitFor(`resuming job ` + id)
	if got := c.coord.waitFor(id + `: restoring checkpoint (\d+)`)[1]; got == saved || atoi(t, got) < atoi(t, own) {
		t.Fatalf("the job resumed from checkpoint %s, want its own latest (%s or later), not the savepoint's (%s)", got, own, saved)
	}
	if err := client.wait(); err != nil {
		t.Fatalf("the job submitted from the savepoint: %v\n%s\ncoordinator:\n%s", err, client.output(), c.coord.output())
	}
	if err := cli.VerifyLines(weirapi.ExactlyOnce, ref, lines(t, out)); err != nil {
		t.Fatalf("output of the stopped job and the one resumed from its savepoint: %v\ncoordinator:\n%s", err, c.coord.output())
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// weir stop JOB --savepoint --drain has the coordinator drain the job's
// savepoint checkpoint on its workers, and the job stops after it.
func TestClusterStopWithDrain(t *testing.T) {
	clusterTest(t)
	job := append(slices.Clone(keycount[:len(keycount)-2]), "-p", "2")
	c := &testCluster{t: t, dir: t.TempDir(), workers: map[string]*proc{}, replacement: "1m"}
	c.store = filepath.Join(c.dir, "store")
	c.startCoordinator("127.0.0.1:0")
	c.startWorker("w1")
	c.startWorker("w2")

	client, _ := c.submit(job, "--rate", "100000") // slower, to be running still at the stop
	id := c.coord.waitFor(`job (\S+) started`)[1]
	c.coord.waitFor(`checkpoint 1 completed`)
	stop := weirOut(t, "stop", id, "--savepoint", "--drain", "--coordinator", c.addr, "--dir", filepath.Join(c.dir, "stop"))
	drained := c.coord.waitFor(id + `: checkpoint (\d+) drains the job`)[1]
	c.coord.waitFor(id + `: stopped after the savepoint of checkpoint ` + drained)
	if _, err := os.Stat(filepath.Join(stop, "_savepoint")); err != nil {
		t.Fatalf("weir stop --drain printed %q: %v", stop, err)
	}
	if err := client.wait(); err != nil {
		t.Fatalf("the client waiting for the drained job: %v\n%s", err, client.output())
	}
	if st := weirOut(t, "status", id, "--coordinator", c.addr); !strings.Contains(st, id+" (keycount): stopped") {
		t.Fatalf("weir status after the stop:\n%s", st)
	}
}
