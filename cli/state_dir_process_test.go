package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A pebble run given no --state-local-dir keeps its stores and the local
// copies of checkpointed files in a temporary directory of the process;
// that directory goes when the process ends, so that repeated runs do
// not fill the disk.
func TestPebbleRunRemovesItsTemporaryLocalStateDirectory(t *testing.T) {
	bin := weirBinary(t)
	tmp := t.TempDir()
	cmd := exec.Command(bin, "run", "keycount", "--events", "100000", "--keys", "100", "-p", "2",
		"--guarantee", "exactly-once", "--checkpoint-interval", "10ms", "--progress", "off",
		"--state-backend", "pebble", "--output", filepath.Join(t.TempDir(), "out"))
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("weir run: %v\n%s", err, out)
	}
	left, err := filepath.Glob(filepath.Join(tmp, "weir-state-*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Fatalf("the run left its temporary local state behind: %v", left)
	}
}
