package cli_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// keycount run by weir run --http is rescaled live with weir rescale
// --http: its count task goes from parallelism 2 to 3 while the source
// runs on. weir status shows the task at 3 and lists the live rescale,
// the run's report too (its records written counted since the rescale,
// as the sink's subtasks were replaced), and the output verifies
// exactly-once against the failure-free run (--verify). Before, a rescale of the source and
// one of an unknown operator are refused, saying why, and change
// nothing.
func TestLiveRescaleOverHTTPIsExactlyOnceAndListed(t *testing.T) {
	dir := t.TempDir()
	s := steer(t, "run", "keycount", "--events", "600000", "--rate", "150000", "--keys", "50", "--window", "100ms", "-p", "2",
		"--progress", "off", "--guarantee", "exactly-once", "--checkpoint-interval", "50ms", "--log-checkpoints",
		"--state-dir", filepath.Join(dir, "state"), "--output", filepath.Join(dir, "out"), "--http", "127.0.0.1:0", "--verify")
	s.completed(t, 1)
	url := s.dashboard(t)

	weirFails(t, `409 Conflict: the job cannot change parallelism while it runs: source "events"`,
		"rescale", "--http", url, "--operator", "events", "-p", "3")
	weirFails(t, `400 Bad Request: the job has no operator named "nope"`, "rescale", "--http", url, "--operator", "nope=3")

	out := weirOut(t, "rescale", "--http", url, "--operator", "count", "-p", "3")
	m := regexp.MustCompile(`^rescaled "count -> format -> output" from parallelism 2 to 3 live at checkpoint (\d+) \(3 subtasks replaced, paused \S+\)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("weir rescale printed %q", out)
	}
	listed := `rescale 1: task "count -> format -> output" parallelism 2 -> 3 live at checkpoint ` + m[1] + ", paused "
	status := weirOut(t, "status", "--http", url, "keycount")
	if !strings.Contains(status, "task count -> format -> output") || !strings.Contains(status, "p=3") || !strings.Contains(status, "  subtask 2:") ||
		!strings.Contains(status, listed) {
		t.Fatalf("weir status after the rescale, want the task at p=3 with subtask 2 and %q:\n%s", listed, status)
	}

	code, log := s.wait(t)
	if code != 0 || !strings.Contains(log, "weir: "+listed) || !strings.Contains(log, "weir: verified exactly-once") ||
		!strings.Contains(log, "records written since the live rescale at checkpoint "+m[1]) {
		t.Fatalf("the rescaled job: exit %d, want 0, the rescale in its report, the sinks' counts said to start at it and the output verified\n%s", code, log)
	}
	if strings.Contains(log, "recovery 1") {
		t.Fatalf("the live rescale restarted the job:\n%s", log)
	}
}
