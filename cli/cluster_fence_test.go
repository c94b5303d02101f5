package cli_test

import (
	"strings"
	"testing"

	weirapi "github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
)

// Split brain: while a coordinator runs a job, a second coordinator is
// started on the same store with workers of its own. The second claims a
// newer leadership epoch and resumes the job: it adopts the attempt the
// first one's workers run, which follow it, or restarts the job from the
// latest checkpoint; the first finds itself superseded, commits nothing
// more, says so (and so do its workers) and exits with an error. The
// output is the failure-free output, each row once.
func TestClusterASupersededCoordinatorCommitsNothing(t *testing.T) {
	skipShort(t)
	// Long enough that the first coordinator still runs the job when the
	// second one starts on a loaded machine.
	job := []string{"keycount", "--events", "3000000", "--keys", "200", "--window", "100ms", "-p", "3"}
	ref := reference(t, job)
	a := newCluster(t, 3)
	client, out := a.submit(job, "--rate", "150000")
	a.coord.waitFor(`checkpoint 2 completed`)

	b := &testCluster{t: t, dir: a.dir, store: a.store, workers: map[string]*proc{}, replacement: "1m"}
	b.startCoordinator("127.0.0.1:0")
	a.coord.waitFor(`coordinator epoch 1 superseded by epoch 2: committing nothing`)
	for _, w := range a.workers {
		w.waitFor(`was superseded by a newer one: it commits nothing from now on`)
	}
	if err := a.coord.wait(); err == nil || !strings.Contains(a.coord.output(), "weir: deposed: coordinator epoch 1 superseded by epoch 2") {
		t.Fatalf("the superseded coordinator exited with %v, want an error that says it was superseded:\n%s", err, a.coord.output())
	}
	client.kill() // it waited on the first coordinator

	for _, id := range []string{"b1", "b2", "b3"} {
		b.startWorker(id)
	}
	b.coord.waitFor(`job keycount-1 finished`)
	if err := cli.VerifyLines(weirapi.ExactlyOnce, ref, lines(t, out)); err != nil {
		t.Fatalf("the output is not the failure-free output: %v\nfirst coordinator:\n%s\nsecond coordinator:\n%s", err, a.coord.output(), b.coord.output())
	}
	if s := a.coord.output(); strings.Contains(s, "job keycount-1 finished") || strings.Contains(s, "job keycount-1 failed") {
		t.Fatalf("the superseded coordinator recorded an end of the job:\n%s", s)
	}
}
