package cli_test

import (
	"regexp"
	"strconv"
	"testing"

	weirapi "github.com/weir-stream/weir"
)

// A stateful Nexmark query (q4: auctions joined with their bids in keyed
// state, the winning bids, then averages per category) on a cluster of
// real processes is rescaled live twice while it runs: its winning-bids
// task from 2 to 4, then its averaging task from 2 to 1, and a worker is
// killed with SIGKILL during the second rescale. The job recovers, and
// its output is what a failure-free run writes, as the nexmark job's own
// check compares them.
func TestClusterLiveRescaleNexmarkQ4WithAWorkerKilledDuringIt(t *testing.T) {
	clusterTest(t)
	c, client, out, id, refDir := startNexmarkQ4(t, 10000)
	got := weirOut(t, "rescale", id, "--operator", "q4-winning-bids", "-p", "4", "--coordinator", c.addr)
	m := regexp.MustCompile(`^rescaled "q4-winning-bids" of \S+ from parallelism 2 to 4 live at checkpoint (\d+)`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("weir rescale printed %q", got)
	}
	c.coord.waitFor(id + `: checkpoint ` + strconv.Itoa(atoi(t, m[1])+1) + ` completed`)

	from := c.coord.mark()
	down := start(t, "rescale", "rescale", id, "--operator", "q4-average", "-p", "1", "--coordinator", c.addr)
	c.coord.waitFrom(from, id+`: checkpoint \d+ rescales "q4-average -> output" to 1 live`)
	c.workers["w4"].kill() // runs a subtask of q4-winning-bids, which sends into the changing task
	c.coord.waitFrom(from, `worker w4 lost`)
	c.startWorker("w5")
	c.coord.waitFrom(from, id+`: failure 1: `)
	_ = down.wait() // the rescale completed, or failed with its checkpoint: either way the job goes on
	if err := client.wait(); err != nil {
		t.Fatalf("the job did not finish: %v\n%s\ncoordinator:\n%s", err, client.output(), c.coord.output())
	}
	if err := nexmarkVerify(t)(weirapi.ExactlyOnce, lines(t, refDir), lines(t, out)); err != nil {
		t.Fatalf("q4 rescaled live and failed over is not exactly-once: %v\nrescale:\n%s\ncoordinator:\n%s", err, down.output(), c.coord.output())
	}
	t.Logf("the second rescale: %s", down.output())
}
