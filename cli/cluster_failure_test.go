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
	skipShort(t)
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
