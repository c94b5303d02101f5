package cluster_test

import (
	"strconv"
	"testing"
)

// A lost worker that ran only active standbys (a passive standby worker,
// where standbys go first) costs the job nothing but them: no subtask
// fails, and the next completed checkpoint places new standbys on the
// other workers, restored from it, to which the primaries ship their
// input logs from its mark. When a primary's worker is lost afterwards,
// its subtasks' new standbys take their place: the surviving source never
// rewinds, and the output is exact.
func TestClusterReplacesLostStandbys(t *testing.T) {
	var victim, survivor string
	logs, src := loseAWorker{unchained: true, standby: true, events: 1_000_000,
		before: func(t *testing.T, c *windowsCluster) { c.start(t, "w3", true) },
		script: func(t *testing.T, c *windowsCluster) {
			c.logs.wait(t, "active standbys of subtasks 1.0, 1.1, 2.0, 2.1 on worker w3$")
			c.logs.waitCount(t, "^"+c.job+": checkpoint [0-9]+ completed", 2)
			c.stop("w3")
			m := c.logs.waitMatch(t, `active standbys of subtasks 1\.0, 2\.0 on worker (w[12]) again, from checkpoint ([0-9]+)`)
			c.logs.wait(t, `active standbys of subtasks 1\.1, 2\.1 on worker w[12] again`)
			if n := c.logs.count("^" + c.job + ": failure"); n != 0 {
				t.Fatalf("losing the standbys' worker failed %d subtasks", n)
			}
			from, _ := strconv.Atoi(m[2])
			c.logs.wait(t, "^"+c.job+": checkpoint "+strconv.Itoa(from+2)+" completed")
			c.start(t, "w4", false) // for the lost worker's source and sink
			victim = c.workerOf(t, 0, 0)
			if victim == m[1] {
				t.Fatalf("the new standbys of subtasks 1.0 and 2.0 run on their primaries' worker %s", victim)
			}
			survivor = m[1]
			c.stop(victim)
			c.logs.wait(t, "the active standbys of subtasks 1.0, 2.0 on worker "+survivor+" take their place")
		}}.run(t)
	logs.wait(t, "took their place")
	if n := src.opens[1].Load(); n != 1 {
		t.Fatalf("the surviving source subtask was opened %d times, want once: it rewound", n)
	}
}

// A standby that took its primary's place logs its own input from its
// next snapshot on, and gets a standby of its own from the next completed
// checkpoint: when its worker is lost in turn, that standby takes its
// place, and the output is still exact.
func TestClusterAPromotedStandbyGetsAStandbyOfItsOwn(t *testing.T) {
	loseAWorker{unchained: true, standby: true, events: 1_000_000,
		script: func(t *testing.T, c *windowsCluster) {
			c.logs.wait(t, `active standbys of subtasks 1\.0, 2\.0 on worker w[12]$`)
			c.logs.waitCount(t, "^"+c.job+": checkpoint [0-9]+ completed", 2)
			c.start(t, "w3", false)
			first := c.workerOf(t, 0, 0)
			c.stop(first)
			m := c.logs.waitMatch(t, `the active standbys of subtasks 1\.0, 2\.0 on worker (w[12]) take their place`)
			second := m[1]
			again := c.logs.waitMatch(t, `active standbys of subtasks [0-9., ]*1\.0[0-9., ]* on worker (w[0-9]) again, from checkpoint ([0-9]+)`)
			if again[1] == second {
				t.Fatalf("the promoted subtasks' new standbys run on their own worker %s", second)
			}
			from, _ := strconv.Atoi(again[2])
			c.logs.wait(t, "^"+c.job+": checkpoint "+strconv.Itoa(from+2)+" completed")
			c.start(t, "w4", false) // for the lost worker's source and sink
			c.stop(second)
			c.logs.wait(t, "the active standbys of subtasks [0-9., ]*1\\.0[0-9., ]* on worker "+again[1]+" take their place")
		}}.run(t)
}
