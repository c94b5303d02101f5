package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	weirapi "github.com/weir-stream/weir"
)

// A restore whose key-group count, pipeline or job settings differ from
// the checkpoint's is refused before anything runs, naming each
// difference; the checkpoint then still restores with the original
// flags, and the output is exactly-once.
func TestRestoreRefusesAChangedLayoutOrSettingNamingIt(t *testing.T) {
	dir := t.TempDir()
	job := []string{"run", "keycount", "--events", "300000", "--keys", "50", "--window", "100ms", "-p", "2", "--progress", "off"}
	ref := filepath.Join(dir, "ref")
	if code, _, stderr := weir(t, append(job, "--output", ref)...); code != 0 {
		t.Fatalf("reference run: exit %d\n%s", code, stderr)
	}
	out, state := filepath.Join(dir, "out"), filepath.Join(dir, "state")
	ft := []string{"--guarantee", "exactly-once", "--checkpoint-interval", "50ms", "--state-dir", state, "--output", out}
	killAfter(t, "checkpoint 2 completed", append(append(job, ft...), "--rate", "150000", "--log-checkpoints")...)
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
		{[]string{"-p", "3"}, []string{`ran task "count -> format -> output" with parallelism 2, this run has 3`, "restore with parallelism 2 (--parallelism)"}},
		{[]string{"--chaining=false"}, []string{"different pipeline", "restore with the same chaining (--chaining)"}},
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
	if err := weirapi.VerifyLines(weirapi.ExactlyOnce, lines(t, ref), lines(t, out)); err != nil {
		t.Fatalf("output after the refused restores is not exactly-once: %v\n%s", err, stderr)
	}
}
