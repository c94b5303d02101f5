package cli_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// haCluster is two coordinators with --ha on one store, and workers and
// clients that know both.
type haCluster struct {
	*testCluster
	a, b  *proc
	addrs string
}

// newHACluster starts coordinator a, which leads once its first lease
// period passed, then standby b, then workers. A short lease makes a
// takeover after a kill or a freeze quick, but a leader on a loaded
// machine may then miss a renewal and lose the lead before the test
// means it to (with 1s, at a load average of about 9, it lost the lead
// before its second checkpoint); the tests that wait for the lease to
// expire give 3s, the others longer. A new leader waits up to 15s for the
// workers to report their attempts: a worker that last tried the frozen
// leader waits out its welcome timeout (5s) first.
func newHACluster(t *testing.T, workers int, lease string) *haCluster {
	c := &testCluster{t: t, dir: t.TempDir(), workers: map[string]*proc{}, replacement: "1m"}
	c.store = filepath.Join(c.dir, "store")
	h := &haCluster{testCluster: c}
	startHA := func(name string) (*proc, string) {
		p := start(t, name, "coordinator", "--ha", "--listen", "127.0.0.1:0", "--checkpoint-store", c.store, "--lease-period", lease,
			"--replacement-timeout", c.replacement, "--heartbeat-timeout", "1s", "--heartbeat-interval", "100ms", "--adopt-timeout", "15s")
		return p, p.waitFor(`listening on (\S+) `)[1]
	}
	var addrA, addrB string
	h.a, addrA = startHA("coordinator-a")
	h.a.waitFor(`leading the store .* with epoch 1`)
	h.b, addrB = startHA("coordinator-b")
	h.b.waitFor(`the leader \(epoch 1\) serves at ` + regexp.QuoteMeta(addrA))
	h.addrs = addrA + "," + addrB
	c.coord, c.addr = h.a, h.addrs
	for i := 1; i <= workers; i++ {
		c.startWorker("w" + string(rune('0'+i)))
	}
	return h
}

// noRestarts fails the test if a worker cancelled, failed or restarted
// an attempt, and unless each adopted its attempt from the coordinator
// of epoch.
func (h *haCluster) noRestarts(epoch string) {
	h.t.Helper()
	for id, w := range h.workers {
		out := w.output()
		if regexp.MustCompile(`cancelled|attempt \S+ failed|running: restored|restarted \d+ subtasks`).MatchString(out) {
			h.t.Fatalf("worker %s stopped or restarted a task:\n%s", id, out)
		}
		if !strings.Contains(out, "adopted by the coordinator of epoch "+epoch) {
			h.t.Fatalf("worker %s was not adopted by the coordinator of epoch %s:\n%s", id, epoch, out)
		}
	}
}

// checkOutput checks the job's output as testCluster.check does,
// printing the new leader's log if it fails.
func (h *haCluster) checkOutput(client *proc, out string, ref []string) {
	h.t.Helper()
	h.coord = h.b
	h.check(client, out, ref)
}

// The leading coordinator is killed with SIGKILL while the job
// checkpoints; the standby takes over when the lease expires, adopts the
// attempt the workers kept running and completes checkpoints again. No
// task restarts, and the output is exactly-once.
func TestClusterHALeaderKillRestartsNoTask(t *testing.T) {
	skipShort(t)
	ref := reference(t, keycount)
	h := newHACluster(t, 3, "3s")
	client, out := h.submit(keycount)
	h.a.waitFor(`checkpoint 2 completed`)
	h.a.kill()
	h.b.waitFor(`leading the store .* with epoch 2`)
	h.b.waitFor(`job keycount-1: adopting its running attempt \(3 shares\)`)
	h.b.waitFor(`keycount-1: checkpoint \d+ completed`)
	h.checkOutput(client, out, ref)
	h.noRestarts("2")
}

// The leader is frozen (SIGSTOP): the workers hear nothing from it and
// go to the standby, which takes over when the lease expires and
// completes checkpoints. Woken up (SIGCONT), the old leader finds itself
// superseded and commits nothing; the output is exactly-once.
func TestClusterHAFrozenLeaderNeverCommitsAfterTheTakeover(t *testing.T) {
	skipShort(t)
	ref := reference(t, keycount)
	h := newHACluster(t, 3, "3s")
	client, out := h.submit(keycount)
	h.a.waitFor(`checkpoint 2 completed`)
	h.a.stop()
	h.b.waitFor(`job keycount-1: adopting its running attempt \(3 shares\)`)
	h.b.waitFor(`keycount-1: checkpoint \d+ completed`)
	frozenAt := h.a.mark()
	if err := h.a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	h.a.waitFrom(frozenAt, `superseded by epoch 2`)
	h.checkOutput(client, out, ref)
	if after := strings.Join(strings.Split(h.a.output(), "\n")[frozenAt:], "\n"); regexp.MustCompile(`checkpoint \d+ completed|job keycount-1 (finished|failed)`).MatchString(after) {
		t.Fatalf("the superseded leader completed a checkpoint or recorded the job's end after it woke up:\n%s", after)
	}
	h.noRestarts("2")
}

// weir coordinator handover passes the lead to the standby at once; the
// job's tasks run on, adopted, and the output is exactly-once.
func TestClusterHAHandoverRestartsNoTask(t *testing.T) {
	skipShort(t)
	ref := reference(t, keycount)
	h := newHACluster(t, 3, "5s")
	client, out := h.submit(keycount)
	h.a.waitFor(`checkpoint 2 completed`)
	ho := start(t, "handover", "coordinator", "handover", "--coordinator", h.addrs)
	if err := ho.wait(); err != nil {
		t.Fatalf("handover: %v\n%s", err, ho.output())
	}
	h.b.waitFor(`job keycount-1: adopting its running attempt \(3 shares\)`)
	h.a.waitFor(`handing over`)
	h.checkOutput(client, out, ref)
	h.noRestarts("2")
	// The old leader waits as a standby again.
	h.a.waitFor(`the leader \(epoch 2\) serves at`)
}
