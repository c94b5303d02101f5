package cli_test

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
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
	c.coord.waitFrom(from, id+`: checkpoint `+ck+` ran operator "count" .* with parallelism \d+, this run has `+strconv.Itoa(p)+`: its state moves by key group`)
	c.coord.waitFrom(from, id+`: checkpoint \d+ completed`)
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
	skipShort(t)
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
