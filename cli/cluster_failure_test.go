package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On a cluster as in one process, a configuration error (an --output that
// is a file, an --input that does not exist) and a malformed record under
// --on-malformed fail fail the job at once, naming the path: the workers
// report the failure's class with its text, and the coordinator restarts
// nothing. Under fine-grained failover the failure of a single subtask
// carries its class the same way.
func TestClusterFailsAtOnceOnAConfigurationError(t *testing.T) {
	clusterTest(t)
	dir := t.TempDir()
	outFile := filepath.Join(dir, "out-file")
	if err := os.WriteFile(outFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := writeEvents(t, `{"key": 1, "time": 5}`, `not json`)
	missing := filepath.Join(dir, "missing.jsonl")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"keycount", "--events", "1000", "--output", outFile}, "sink directory " + outFile + " exists and is not a directory"},
		{[]string{"keycount", "--events", "1000", "--output", outFile, "--failover", "fine-grained"}, "sink directory " + outFile + " exists and is not a directory"},
		{[]string{"keycount", "--input", missing, "--output", filepath.Join(dir, "out-missing")}, missing + ": no such file"},
		{[]string{"keycount", "--input", bad, "--output", filepath.Join(dir, "out-bad")}, "malformed record at " + bad + ":2"},
	}
	c := newCluster(t, 2)
	for i, tc := range cases {
		args := append(append([]string{"submit", "--coordinator", c.addr}, tc.args...), "-p", "2", "--guarantee", "exactly-once",
			"--checkpoint-interval", "10ms", "--restart-delay", "1ms", "--wait")
		from := c.coord.mark()
		client := start(t, "submit", args...)
		err := client.wait()
		job := fmt.Sprintf("keycount-%d", i+1)
		c.coord.waitFrom(from, `job `+job+` failed`)
		if err == nil || !strings.Contains(client.output(), tc.want) {
			t.Errorf("weir %s: %v, want a failure saying %q:\n%s", strings.Join(args, " "), err, tc.want, client.output())
		}
		coord := strings.Join(strings.Split(c.coord.output(), "\n")[from:], "\n")
		if strings.Contains(coord, "job "+job+": failure 1:") || strings.Contains(client.output(), "gave up") {
			t.Errorf("weir %s restarted the job:\nclient:\n%s\ncoordinator:\n%s", strings.Join(args, " "), client.output(), coord)
		}
	}
}

// A state blob of the checkpoint a cluster job restores has a flipped
// byte (same size, so only reading it finds it). The worker that reads it
// reports the corrupt checkpoint as such; the coordinator marks it
// unusable and restores the checkpoint before, as `weir run` does, and
// the output is the failure-free output.
func TestClusterFallsBackFromACorruptStateBlob(t *testing.T) {
	clusterTest(t)
	ref := reference(t, keycount)
	c := newCluster(t, 3)
	client, out := c.submit(keycount)
	c.coord.waitFor(`checkpoint 3 completed`)
	c.workers["w2"].kill()
	// The job needs three slots: it waits for a new worker, and no
	// checkpoint completes meanwhile.
	id := c.coord.waitFor(`job keycount-1: failure 1: .*; restarting in \S+ from checkpoint (\d+)`)[1]
	chk := filepath.Join(c.store, "jobs", "keycount-1", fmt.Sprintf("chk-%012s", id))
	flipLargestStateBlob(t, chk)
	c.startWorker("w4")
	c.coord.waitFor(`checkpoint ` + id + ` is unusable: on worker \S+: restoring checkpoint ` + id + `: .*checksum mismatch.*; restoring checkpoint \d+ instead`)
	// The mark is written before the fallback is logged; retention may
	// delete the whole checkpoint later, once newer ones completed.
	if _, err := os.Stat(filepath.Join(chk, "_metadata")); err == nil {
		if _, err := os.Stat(filepath.Join(chk, "_unusable")); err != nil {
			t.Fatalf("checkpoint %s is not marked unusable: %v", id, err)
		}
	}
	c.check(client, out, ref)
}

// flipLargestStateBlob flips a bit in the middle of the largest state
// blob of checkpoint or savepoint directory chk (a window's state),
// keeping its size.
func flipLargestStateBlob(t *testing.T, chk string) {
	t.Helper()
	blobs, _ := filepath.Glob(filepath.Join(chk, "state", "*"))
	var flipped string
	for _, b := range blobs {
		if flipped == "" || mustSize(t, b) > mustSize(t, flipped) {
			flipped = b
		}
	}
	data, err := os.ReadFile(flipped)
	if err != nil || len(data) == 0 {
		t.Fatalf("reading the largest state blob of %s (%q): %v", chk, flipped, err)
	}
	data[len(data)/2] ^= 0x01
	if err := os.WriteFile(flipped, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
