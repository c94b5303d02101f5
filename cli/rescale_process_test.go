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

// keycount run at parallelism 2, killed after some checkpoints, restores
// at parallelism 1, 3 and 8: its window state moves by key group, the
// generator's positions are dealt out to the new subtasks and the sink's
// pending transactions are committed by the new ones, so the output is
// the failure-free run's, exactly once.
func TestRestoreAtAnotherParallelismIsExactlyOnce(t *testing.T) {
	for _, p := range []int{1, 3, 8} {
		t.Run(fmt.Sprintf("p%d", p), func(t *testing.T) {
			job, ft, ref, out, _ := killedKeyCount(t, 3)
			restore := append(append(withParallelism(job, p), ft...), "--restore", "latest")
			code, _, stderr := weir(t, restore...)
			if code != 0 {
				t.Fatalf("restore at parallelism %d: exit %d\n%s", p, code, stderr)
			}
			if err := cli.VerifyLines(weirapi.ExactlyOnce, lines(t, ref), lines(t, out)); err != nil {
				t.Fatalf("output after the restore at parallelism %d is not exactly-once: %v\n%s", p, err, stderr)
			}
		})
	}
}

// A checkpoint restored at another parallelism, killed again after its
// own checkpoints, restores at a third one.
func TestRestoreRescalesTwice(t *testing.T) {
	job, ft, ref, out, _ := killedKeyCount(t, 2)
	restore := append(append(withParallelism(job, 3), ft...), "--restore", "latest")
	killAfter(t, "checkpoint 4 completed", append(restore, "--rate", "150000", "--log-checkpoints")...)
	code, _, stderr := weir(t, append(append(withParallelism(job, 5), ft...), "--restore", "latest")...)
	if code != 0 {
		t.Fatalf("second restore: exit %d\n%s", code, stderr)
	}
	if err := cli.VerifyLines(weirapi.ExactlyOnce, lines(t, ref), lines(t, out)); err != nil {
		t.Fatalf("output after two rescaled restores is not exactly-once: %v\n%s", err, stderr)
	}
}

// Another max parallelism stays refused with parallelism changed too,
// naming both values.
func TestRestoreAtAnotherMaxParallelismIsRefused(t *testing.T) {
	job, ft, _, _, _ := killedKeyCount(t, 2)
	restore := append(append(withParallelism(job, 3), ft...), "--restore", "latest", "--max-parallelism", "64")
	code, _, stderr := weir(t, restore...)
	want := "was taken with --max-parallelism 128, this run has 64: key groups would move; restore with --max-parallelism 128"
	if code != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, "records read") {
		t.Fatalf("restore with another max parallelism: exit %d, want 1 and %q\n%s", code, want, stderr)
	}
}

// withParallelism returns job with its -p value replaced by p.
func withParallelism(job []string, p int) []string {
	out := append([]string(nil), job...)
	for i := range out[:len(out)-1] {
		if out[i] == "-p" {
			out[i+1] = fmt.Sprint(p)
		}
	}
	return out
}

// keycount reading a JSON-lines file, restored at another parallelism
// from its final checkpoint, moves the file source's positions (all at
// their ends) and changes nothing.
func TestRestoreAFileSourceAtAnotherParallelism(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, "events.jsonl")
	var events strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&events, "{\"key\": %d, \"time\": %d}\n", i%7, 1700000000000+int64(i)*10)
	}
	if err := os.WriteFile(input, []byte(events.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	args := []string{"run", "keycount", "--input", input, "--keys", "10", "--guarantee", "exactly-once", "--state-dir", filepath.Join(dir, "state"), "--output", out, "--progress", "off"}
	if code, _, stderr := weir(t, append(args, "-p", "2")...); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	want := lines(t, out)
	code, _, stderr := weir(t, append(args, "-p", "3", "--restore", "latest")...)
	if code != 0 || !strings.Contains(stderr, "0 records read") {
		t.Fatalf("restore at parallelism 3: exit %d, want 0 and nothing read\n%s", code, stderr)
	}
	if err := cli.VerifyLines(weirapi.ExactlyOnce, want, lines(t, out)); err != nil {
		t.Fatalf("output after the restore changed: %v", err)
	}
}
