package cli_test

import (
	"regexp"
	"strings"
	"testing"
)

// Two live worker processes with one --id (a frozen pod and its
// StatefulSet replacement): the later registration takes the id over
// once. The older process's session ends, the job recovers once onto the
// newer one, and the older process, refused from then on, exits saying so
// instead of evicting the newer one in turn. The output is the
// failure-free output.
func TestClusterANewerWorkerProcessTakesTheIdOverOnce(t *testing.T) {
	skipShort(t)
	ref := reference(t, keycount)
	c := newCluster(t, 3)
	client, out := c.submit(keycount)
	c.coord.waitFor(`checkpoint 2 completed`)
	old := c.workers["w2"]
	newer := start(t, "w2 (newer)", "worker", "--coordinator", c.addr, "--slots", "1", "--id", "w2")
	newer.waitFor("joined coordinator")
	c.coord.waitFor(`worker w2 lost: a newer instance of the worker took its id over`)
	old.waitFor(`worker id w2 taken over by a newer session; exiting`)
	if err := old.wait(); err == nil || !strings.Contains(old.output(), "weir: worker id w2 taken over by a newer session; exiting") {
		t.Fatalf("the older w2 exited with %v, want an error saying it was taken over:\n%s", err, old.output())
	}
	c.check(client, out, ref)
	if !strings.Contains(client.output(), "recovery 1: restored checkpoint") || strings.Contains(client.output(), "recovery 2") {
		t.Fatalf("want exactly one recovery:\n%s", client.output())
	}
	if n := len(regexp.MustCompile(`(?m)^weir coordinator: \S+ worker w2 lost`).FindAllString(c.coord.output(), -1)); n != 1 {
		t.Fatalf("worker w2 was lost %d times, want once:\n%s", n, c.coord.output())
	}
}
