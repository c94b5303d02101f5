package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// weirWithEnv runs weir with extra environment variables and returns its
// exit code and combined output.
func weirWithEnv(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(weirBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// Every client command finds the coordinator through $WEIR_COORDINATOR,
// weir status JOB included; a worker with a token the coordinator refuses
// exits with the reason instead of trying again forever.
func TestClientCommandsUseWEIR_COORDINATORAndAWrongTokenStopsAWorker(t *testing.T) {
	clusterTest(t)
	dir := t.TempDir()
	coord := start(t, "coordinator", "coordinator", "--listen", "127.0.0.1:0", "--state-dir", filepath.Join(dir, "store"), "--token", "s3cret")
	addr := coord.waitFor(`listening on (\S+) `)[1]
	env := []string{"WEIR_COORDINATOR=" + addr, "WEIR_TOKEN=s3cret"}

	rogue := startWithEnv(t, "rogue", []string{"WEIR_COORDINATOR=" + addr, "WEIR_TOKEN=wrong"}, "worker", "--slots", "1", "--id", "rogue")
	w := start(t, "w1", "worker", "--coordinator", addr, "--slots", "1", "--id", "w1", "--token", "s3cret")
	w.waitFor("joined coordinator")

	code, res := weirWithEnv(t, env, "submit", "keycount", "--events", "2000", "-p", "1", "--output", filepath.Join(dir, "out"), "--wait")
	if code != 0 {
		t.Fatalf("submit: exit %d\n%s", code, res)
	}
	id := strings.Fields(res)[0]
	code, res = weirWithEnv(t, env, "status", id)
	if code != 0 || !strings.Contains(res, "job "+id+" (keycount): finished") {
		t.Fatalf("weir status %s with $WEIR_COORDINATOR: exit %d\n%s", id, code, res)
	}
	code, res = weirWithEnv(t, env, "jobs")
	if code != 0 || !strings.Contains(res, id) {
		t.Fatalf("weir jobs with $WEIR_COORDINATOR: exit %d\n%s", code, res)
	}

	watchdog := time.NewTimer(2 * time.Minute) // a hang, not a timing assertion
	defer watchdog.Stop()
	select {
	case <-rogue.done:
	case <-watchdog.C:
		rogue.cmd.Process.Signal(syscall.SIGQUIT) // the Go runtime prints every goroutine
		<-rogue.done
		t.Fatalf("the worker with a wrong token did not exit:\n%s", rogue.output())
	}
	if rogue.err == nil || !strings.Contains(rogue.output(), "rejected this worker") || !strings.Contains(rogue.output(), "bearer token") {
		t.Fatalf("worker with a wrong token: %v\n%s", rogue.err, rogue.output())
	}
	if strings.Contains(rogue.output(), "reconnecting") {
		t.Fatalf("the worker with a wrong token tried again:\n%s", rogue.output())
	}
}
