package cli_test

import (
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// With fine-grained failover a killed worker's subtasks restart alone on
// a spare worker, with upstream backup, while the other workers' subtasks
// run on; the output equals the failure-free output.
func TestClusterFineGrainedRestartsOnlyTheKilledWorkersSubtasks(t *testing.T) {
	clusterTest(t)
	ref := reference(t, keycount)
	c := newCluster(t, 4) // three slots and a spare
	client, out := c.submit(keycount, "--failover", "fine-grained")
	c.coord.waitFor(`checkpoint 2 completed`)
	c.workers["w2"].kill() // the job runs on w1 to w3 (placed in id order)
	c.coord.waitFor(`worker w2 lost`)
	c.coord.waitFor(`restarting subtasks .* of a lost worker on worker w4`)
	c.workers["w4"].waitFor(`running: restarted \d+ subtasks of a lost worker`)
	status, err := exec.Command(weirBinary(t), "status", "--coordinator", c.addr, "keycount-1").CombinedOutput()
	if err != nil {
		t.Fatalf("weir status: %v\n%s", err, status)
	}
	// Subtask 1 of every task ran on w2 (slot 1) and now runs on w4; the
	// others run on where they were.
	for _, want := range []string{`subtask 0\.1 on w4: (in \d+|not reported yet)`, `subtask 0\.0 on w1: in [1-9]\d*`, `worker w4 runs subtasks 0\.1 1\.1`} {
		if !regexp.MustCompile(want).Match(status) {
			t.Fatalf("weir status does not match %q:\n%s", want, status)
		}
	}
	c.check(client, out, ref)
	if !regexp.MustCompile(`recovery 1: restored checkpoint \d+ for \d+ of \d+ subtasks`).MatchString(client.output()) {
		t.Fatalf("the recovery did not restart part of the job:\n%s", client.output())
	}
}

// A worker running restarted subtasks is killed while they recover: they
// restart again elsewhere, and the output is still exact.
func TestClusterFineGrainedSurvivesAKillDuringRecovery(t *testing.T) {
	clusterTest(t)
	ref := reference(t, keycount)
	c := newCluster(t, 5) // three slots and two spares
	client, out := c.submit(keycount, "--failover", "fine-grained")
	c.coord.waitFor(`checkpoint 2 completed`)
	c.workers["w2"].kill()
	second := c.coord.waitFor(`restarting subtasks .* of a lost worker on worker (w\d)`)[1]
	c.workers[second].kill()
	c.coord.waitFor(`worker ` + second + ` lost`)
	c.check(client, out, ref)
}

// Failures injected into single subtasks restart them in place, on their
// live workers, while everything else runs on.
func TestClusterFineGrainedWithInjectedFailures(t *testing.T) {
	clusterTest(t)
	ref := reference(t, keycount)
	c := newCluster(t, 3)
	client, out := c.submit(keycount, "--failover", "fine-grained", "--inject-failures", "3", "--failure-seed", "5")
	c.check(client, out, ref)
	if !strings.Contains(client.output(), "recovery 3: restored") {
		t.Fatalf("fewer than three recoveries:\n%s", client.output())
	}
	if n := strings.Count(c.coord.output(), "restarting 1 of 6 subtasks"); n < 3 {
		t.Fatalf("%d failures restarted one subtask alone, want 3:\n%s", n, c.coord.output())
	}
}

// With active standbys, a killed worker's window subtasks are taken over
// by their standbys on another worker, which never stopped processing;
// only its source and sink subtasks restart from the checkpoint. The
// output is exact.
func TestClusterActiveStandbyTakesAKilledWorkersPlace(t *testing.T) {
	clusterTest(t)
	ref := reference(t, keycount)
	c := newCluster(t, 4) // three slots and a spare, where the standbys run
	client, out := c.submit(keycount, "--failover", "fine-grained", "--active-standby", "--chaining=false")
	c.coord.waitFor(`active standbys of subtasks 1\.0, 1\.1, 1\.2, 2\.0, 2\.1, 2\.2 on worker w4`)
	c.coord.waitFor(`checkpoint 2 completed`)
	c.workers["w2"].kill()
	c.coord.waitFor(`the active standbys of subtasks 1\.1, 2\.1 on worker w4 take their place`)
	c.workers["w4"].waitFor(`the active standbys of subtasks 1\.1, 2\.1 took their place`)
	c.check(client, out, ref)
}

// A SIGKILLed worker that ran only active standbys fails no subtask: new
// standbys start on the other workers from the next completed checkpoint,
// and when a primary's worker is killed afterwards, its new standby takes
// its place. The output is exact.
func TestClusterReplacesTheStandbysOfAKilledWorker(t *testing.T) {
	clusterTest(t)
	job := append(slices.Clone(keycount), "--events", "3000000") // ten seconds: two kills and a replacement in between
	ref := reference(t, job)
	c := newCluster(t, 4) // three slots and a spare, where the standbys run first
	client, out := c.submit(job, "--failover", "fine-grained", "--active-standby", "--chaining=false")
	c.coord.waitFor(`active standbys of subtasks 1\.0, 1\.1, 1\.2, 2\.0, 2\.1, 2\.2 on worker w4`)
	c.coord.waitFor(`checkpoint 2 completed`)
	c.workers["w4"].kill()
	m := c.coord.waitFor(`active standbys of subtasks [0-9., ]*1\.1[0-9., ]* on worker (w[13]) again, from checkpoint ([0-9]+)`)
	from, _ := strconv.Atoi(m[2])
	c.coord.waitFor(fmt.Sprintf(`checkpoint %d completed`, from+2))
	c.startWorker("w5") // for the killed worker's source and sink
	c.workers["w2"].kill()
	c.coord.waitFor(`the active standbys of subtasks [0-9., ]*1\.1[0-9., ]* on worker ` + m[1] + ` take their place`)
	c.check(client, out, ref)
	if strings.Contains(c.coord.output(), "worker w4 lost: its connection closed; restarting") {
		t.Fatalf("losing the worker that ran only standbys restarted subtasks:\n%s", c.coord.output())
	}
}

// A coordinator frozen for longer than the heartbeat timeout (SIGSTOP, as
// a stalled VM or a starved machine would be) finds its workers' unread
// heartbeats when it runs again: it declares none of them lost, and the
// job finishes with the failure-free output. (It used to declare healthy
// workers lost, restart their subtasks elsewhere, and the job could hang.)
//
// A worker lost for a silence as long as the freeze was lost to it; one
// lost for a silence shorter than the freeze went quiet after the
// coordinator ran again (on a machine loaded by other tests, a worker can
// miss its heartbeats for a second), which the job's failover handles and
// the test only logs.
func TestClusterFineGrainedSurvivesAFrozenCoordinator(t *testing.T) {
	skipShort(t)
	ref := reference(t, keycount)
	c := newCluster(t, 4) // three slots and a spare
	client, out := c.submit(keycount, "--failover", "fine-grained")
	c.coord.waitFor(`checkpoint 2 completed`)
	if err := c.coord.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// The freeze itself is the failure injected: three heartbeat timeouts.
	const freeze = 3 * time.Second
	time.Sleep(freeze)
	if err := c.coord.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	c.check(client, out, ref)
	for _, m := range regexp.MustCompile(`worker \S+ lost: no heartbeat for (\S+) `).FindAllStringSubmatch(c.coord.output(), -1) {
		silent, err := time.ParseDuration(m[1])
		if err != nil {
			t.Fatalf("reading the silence in %q: %v", m[0], err)
		}
		if silent >= freeze {
			t.Fatalf("the frozen coordinator declared a healthy worker lost (%s):\n%s", m[0], c.coord.output())
		}
		t.Logf("after the freeze, %s: a worker went quiet while the coordinator ran", m[0])
	}
}
