package cli_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	weirapi "github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
)

// The rescale oracle: every stateful Nexmark query, run at parallelism 2
// with exactly-once checkpoints, killed with SIGKILL once some completed
// and restored at parallelism 1, 3 or 8, writes what a failure-free run
// writes (as the nexmark job's own check compares them: the same rows,
// or for a changelog a valid one with the same final table). The queries
// cover what the built-in jobs expose of keyed state: process functions
// with value, list and map state and timers (q3, q4, q9, q15-q20),
// tumbling and sliding windows (q5, q7, q8, q12), session windows (q11),
// joins built from keyed state (q3, q4, q9, q20; q8 joins by window).
// No built-in job uses weir.WindowJoin, weir.IntervalJoin or
// weir.Deduplicate (q18 deduplicates with a process function).
//
// Each query restores at one parallelism, rotating through 1, 3 and 8
// (q4 and q11 at all three), from a checkpoint taken early or later in
// the run (the second, fourth or sixth). The sources emit watermarks
// every millisecond, so that records a rescaled source subtask yields
// out of event-time order would be late and show.
func TestRescaleOracleNexmark(t *testing.T) {
	cases := []struct {
		query string
		ps    []int
	}{
		{"q3", []int{1}}, {"q4", []int{1, 3, 8}}, {"q5", []int{3}}, {"q7", []int{8}},
		{"q8", []int{1}}, {"q9", []int{3}}, {"q11", []int{1, 3, 8}}, {"q12", []int{8}},
		{"q15", []int{1}}, {"q16", []int{3}}, {"q17", []int{8}}, {"q18", []int{1}},
		{"q19", []int{3}}, {"q20", []int{8}},
	}
	verify := nexmarkVerify(t)
	for q, c := range cases {
		kill := 2 + 2*(q%3)
		t.Run(c.query, func(t *testing.T) {
			job := []string{"run", "nexmark", "--query", c.query, "--events", "40000", "--tps", "200", "--generators", "10", "--watermark-interval", "1ms", "-p", "2", "--progress", "off"}
			ref := filepath.Join(t.TempDir(), "ref")
			if code, _, stderr := weir(t, append(job, "--output", ref)...); code != 0 {
				t.Fatalf("reference run: exit %d\n%s", code, stderr)
			}
			want := lines(t, ref)
			for _, p := range c.ps {
				t.Run(fmt.Sprintf("p%d", p), func(t *testing.T) {
					got, stderr := killedAndRestored(t, job, kill, p)
					if err := verify(weirapi.ExactlyOnce, want, got); err != nil {
						t.Fatalf("%s restored at parallelism %d is not exactly-once: %v\n%s", c.query, p, err, stderr)
					}
				})
			}
		})
	}
}

// A Nexmark checkpoint restored at parallelism 3, killed again after its
// own checkpoints, restores at parallelism 1: the source's positions and
// the state move twice.
func TestRescaleOracleNexmarkTwice(t *testing.T) {
	job := []string{"run", "nexmark", "--query", "q4", "--events", "40000", "--tps", "200", "--generators", "10", "--watermark-interval", "1ms", "-p", "2", "--progress", "off"}
	ref := filepath.Join(t.TempDir(), "ref")
	if code, _, stderr := weir(t, append(job, "--output", ref)...); code != 0 {
		t.Fatalf("reference run: exit %d\n%s", code, stderr)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	ft := []string{"--guarantee", "exactly-once", "--checkpoint-interval", "50ms", "--state-dir", filepath.Join(dir, "state"), "--output", out}
	killAfter(t, "checkpoint 3 completed", append(append(job, ft...), "--rate", "40000", "--log-checkpoints")...)
	killAfter(t, "checkpoint 5 completed", append(append(withParallelism(job, 3), ft...), "--restore", "latest", "--rate", "40000", "--log-checkpoints")...)
	code, _, stderr := weir(t, append(append(withParallelism(job, 1), ft...), "--restore", "latest")...)
	if code != 0 {
		t.Fatalf("second restore: exit %d\n%s", code, stderr)
	}
	if moved := "with parallelism 3, this run has 1: its state moves by key group"; !strings.Contains(stderr, moved) {
		t.Fatalf("the second restore did not move state from parallelism 3 (no %q):\n%s", moved, stderr)
	}
	if err := nexmarkVerify(t)(weirapi.ExactlyOnce, lines(t, ref), lines(t, out)); err != nil {
		t.Fatalf("q4 after two rescaled restores is not exactly-once: %v\n%s", err, stderr)
	}
}

// killedAndRestored runs job (at parallelism 2) with exactly-once
// checkpoints every 50ms into a fresh state directory, throttled, kills
// it with SIGKILL once checkpoint kill completed, restores the
// latest checkpoint at parallelism p and returns the rows written and the
// restore's log. It fails the test unless the restore moved state to
// parallelism p.
func killedAndRestored(t *testing.T, job []string, kill, p int) (rows []string, stderr string) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	ft := []string{"--guarantee", "exactly-once", "--checkpoint-interval", "50ms", "--state-dir", filepath.Join(dir, "state"), "--output", out}
	// Throttled to two seconds of input for the events of the jobs here
	// (40,000), so that the kill's checkpoint (the sixth at most) comes
	// before the end on a loaded machine too, where checkpoints every
	// 50ms take longer: at one second, q5's sixth once did not.
	killAfter(t, fmt.Sprintf("checkpoint %d completed", kill), append(append(job, ft...), "--rate", "20000", "--log-checkpoints")...)
	code, _, stderr := weir(t, append(append(withParallelism(job, p), ft...), "--restore", "latest")...)
	if code != 0 {
		t.Fatalf("restore at parallelism %d: exit %d\n%s", p, code, stderr)
	}
	if moved := fmt.Sprintf("with parallelism 2, this run has %d: its state moves by key group", p); !strings.Contains(stderr, moved) {
		t.Fatalf("the restore did not move state to parallelism %d (no %q):\n%s", p, moved, stderr)
	}
	return lines(t, out), stderr
}

// nexmarkVerify returns the nexmark job's own check of its rows.
func nexmarkVerify(t *testing.T) func(g weirapi.Guarantee, ref, got []string) error {
	t.Helper()
	j, ok := cli.LookupJob("nexmark")
	if !ok {
		t.Fatal("no nexmark job")
	}
	if j.Verify == nil {
		return cli.VerifyLines
	}
	return j.Verify
}
