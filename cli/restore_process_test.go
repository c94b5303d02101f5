package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	weirapi "github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
)

// A restore whose key-group count, pipeline or job settings differ from
// the checkpoint's is refused before anything runs, naming each
// difference (another parallelism is no difference: see
// TestRestoreAtAnotherParallelismIsExactlyOnce); the checkpoint then
// still restores with the original flags, and the output is
// exactly-once.
// Operators chained differently keep their state: it moves by operator
// uid into the tasks of the new chaining.
func TestRestoreWithOperatorsChainedDifferentlyIsExactlyOnce(t *testing.T) {
	job, ft, ref, out, _ := killedKeyCount(t, 2)
	code, _, stderr := weir(t, append(append(job, ft...), "--restore", "latest", "--chaining=false")...)
	if code != 0 {
		t.Fatalf("restore with --chaining=false: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "restoring checkpoint") {
		t.Fatalf("the run restored nothing:\n%s", stderr)
	}
	if err := cli.VerifyLines(weirapi.ExactlyOnce, lines(t, ref), lines(t, out)); err != nil {
		t.Fatalf("output after a restore chained differently is not exactly-once: %v\n%s", err, stderr)
	}
}

func TestRestoreRefusesAChangedLayoutOrSettingNamingIt(t *testing.T) {
	job, ft, ref, out, _ := killedKeyCount(t, 2)
	restore := append(append(job, ft...), "--restore", "latest")
	for _, c := range []struct {
		change []string
		says   []string
	}{
		{[]string{"--max-parallelism", "64"}, []string{"was taken with --max-parallelism 128, this run has 64: key groups would move; restore with --max-parallelism 128"}},
		{[]string{"--max-parallelism", "32"}, []string{"this run has 32"}},
		{[]string{"--max-parallelism", "256"}, []string{"this run has 256"}},
		{[]string{"--max-parallelism", "127"}, []string{"this run has 127"}},
		{[]string{"--window", "200ms", "--keys", "60"}, []string{
			"was taken with --window 100ms, this run has 200ms; restore with --window 100ms",
			"was taken with --keys 50, this run has 60; restore with --keys 50"}},
		{[]string{"--seed", "2"}, []string{"--seed 1, this run has 2"}},
		{[]string{"--tps", "1000"}, []string{"--tps 100000, this run has 1000"}},
	} {
		code, _, stderr := weir(t, append(restore, c.change...)...)
		if code != 1 {
			t.Errorf("restore with %v: exit %d, want 1\n%s", c.change, code, stderr)
		}
		for _, s := range c.says {
			if !strings.Contains(stderr, s) {
				t.Errorf("restore with %v does not say %q:\n%s", c.change, s, stderr)
			}
		}
		if strings.Contains(stderr, "records read") {
			t.Errorf("restore with %v ran:\n%s", c.change, stderr)
		}
	}
	// --events and --rate may change: a longer or throttled run goes on.
	code, _, stderr := weir(t, append(restore, "--events", "300000", "--rate", "0")...)
	if code != 0 {
		t.Fatalf("restore with the checkpoint's settings: exit %d\n%s", code, stderr)
	}
	if err := cli.VerifyLines(weirapi.ExactlyOnce, lines(t, ref), lines(t, out)); err != nil {
		t.Fatalf("output after the refused restores is not exactly-once: %v\n%s", err, stderr)
	}
}

// Checkpoints belong to the run that took them. After a finished run, a
// fresh run into the same output that is killed before its first
// checkpoint cannot be continued by --restore latest: the newest
// checkpoint is the finished run's final one, and restoring it would read
// nothing and leave the fresh run's (cleared) output empty. Nor does a
// checkpoint restore into an output its run did not write. A finished
// run's own final checkpoint still restores, into its own output, and
// changes nothing.
func TestRestoreRefusesACheckpointOfAnotherRun(t *testing.T) {
	dir := t.TempDir()
	job := []string{"run", "keycount", "--keys", "50", "--window", "100ms", "-p", "2", "--progress", "off"}
	out, state := filepath.Join(dir, "out"), filepath.Join(dir, "state")
	ft := []string{"--guarantee", "exactly-once", "--state-dir", state, "--output", out}
	finished := append(append(job, ft...), "--events", "20000")
	if code, _, stderr := weir(t, finished...); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	want := lines(t, out)
	// A fresh run that checkpoints every 10 minutes, killed after an
	// injected failure made it start over with no checkpoint completed.
	killAfter(t, "from the beginning (no checkpoint completed yet)", append(append(job, ft...), "--events", "2000000",
		"--rate", "100000", "--checkpoint-interval", "10m", "--inject-failures", "1")...)

	code, _, stderr := weir(t, append(finished, "--restore", "latest")...)
	if code != 1 || !strings.Contains(stderr, "stopped before its first checkpoint") || !strings.Contains(stderr, "which finished") ||
		!strings.Contains(stderr, "Start the job over without --restore") || strings.Contains(stderr, "records read") {
		t.Fatalf("--restore latest after a run that took no checkpoint: exit %d, want 1 and why\n%s", code, stderr)
	}
	chk := filepath.Join(state, "jobs", "keycount", "chk-1")
	code, _, stderr = weir(t, append(finished, "--restore", chk)...)
	if code != 1 || !strings.Contains(stderr, "holds the output of run") || strings.Contains(stderr, "records read") {
		t.Fatalf("restore of the first run's checkpoint into the second run's output: exit %d, want 1 and why\n%s", code, stderr)
	}
	other := append(append(job, "--guarantee", "exactly-once", "--state-dir", state, "--events", "20000", "--output", filepath.Join(dir, "other")), "--restore", chk)
	code, _, stderr = weir(t, other...)
	if code != 1 || !strings.Contains(stderr, "holds no output of run") || strings.Contains(stderr, "records read") {
		t.Fatalf("restore into an output its run did not write: exit %d, want 1 and why\n%s", code, stderr)
	}

	// Start over; then the finished run's final checkpoint restores into
	// its own output, reads nothing and leaves the output as it was.
	if code, _, stderr := weir(t, finished...); code != 0 {
		t.Fatalf("run started over: exit %d\n%s", code, stderr)
	}
	code, _, stderr = weir(t, append(finished, "--restore", "latest")...)
	if code != 0 || !strings.Contains(stderr, "is the final checkpoint of run") {
		t.Fatalf("restore of a finished run's final checkpoint: exit %d\n%s", code, stderr)
	}
	if err := cli.VerifyLines(weirapi.ExactlyOnce, want, lines(t, out)); err != nil {
		t.Fatalf("output after restoring the final checkpoint: %v", err)
	}
}

// A flipped byte inside a state blob of the newest checkpoint keeps its
// size, so only reading it finds it: --restore latest then falls back to
// the checkpoint before, says which it skipped and why, and the output is
// still exactly-once.
func TestRestoreFallsBackFromAFlippedByteInAStateBlob(t *testing.T) {
	job, ft, ref, out, state := killedKeyCount(t, 3)
	// Completed checkpoints only: the kill can leave the directory of one
	// in progress, without its commit point and its blobs.
	metas, _ := filepath.Glob(filepath.Join(state, "jobs", "keycount", "chk-*", "_metadata"))
	var chks []string
	for _, m := range metas {
		chks = append(chks, filepath.Dir(m))
	}
	if len(chks) < 2 {
		t.Fatalf("want at least 2 retained checkpoints, got %v", chks)
	}
	newest := chks[len(chks)-1]
	flipLargestStateBlob(t, newest)
	code, _, stderr := weir(t, append(append(job, ft...), "--restore", "latest")...)
	id := strings.TrimLeft(strings.TrimPrefix(filepath.Base(newest), "chk-"), "0")
	if code != 0 || !strings.Contains(stderr, "checkpoint "+id+" is unusable") || !strings.Contains(stderr, "checksum mismatch") ||
		!strings.Contains(stderr, "instead") {
		t.Fatalf("restore with a flipped byte in checkpoint %s: exit %d, want a fallback that says why\n%s", id, code, stderr)
	}
	if err := cli.VerifyLines(weirapi.ExactlyOnce, lines(t, ref), lines(t, out)); err != nil {
		t.Fatalf("output after the fallback is not exactly-once: %v\n%s", err, stderr)
	}
}

// killedKeyCount runs keycount once without failures into ref, then
// again with exactly-once checkpoints every 50ms into --state-dir state,
// killed with SIGKILL once checkpoint n completed. It returns the job's
// command line, its fault-tolerance flags (which name state and the
// output directory out), for a restore to run, and the directories.
func killedKeyCount(t *testing.T, n int) (job, ft []string, ref, out, state string) {
	t.Helper()
	dir := t.TempDir()
	job = []string{"run", "keycount", "--events", "300000", "--keys", "50", "--window", "100ms", "-p", "2", "--progress", "off"}
	ref = filepath.Join(dir, "ref")
	if code, _, stderr := weir(t, append(job, "--output", ref)...); code != 0 {
		t.Fatalf("reference run: exit %d\n%s", code, stderr)
	}
	out, state = filepath.Join(dir, "out"), filepath.Join(dir, "state")
	ft = []string{"--guarantee", "exactly-once", "--checkpoint-interval", "50ms", "--state-dir", state, "--output", out}
	killAfter(t, fmt.Sprintf("checkpoint %d completed", n), append(append(job, ft...), "--rate", "150000", "--log-checkpoints")...)
	return job, ft, ref, out, state
}

func mustSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
