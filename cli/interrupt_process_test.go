package cli_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	weirapi "github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
)

// interruptAfter runs weir with args, sends it SIGINT (as Ctrl-C does)
// once it printed want on standard error, and returns its exit status
// and everything it printed there. It fails the test if the job ended
// before printing want.
func interruptAfter(t *testing.T, want string, args ...string) (int, string) {
	t.Helper()
	cmd, sc := startScanned(t, args...)
	var log []string
	sent := false
	for sc.Scan() {
		log = append(log, sc.Text())
		if !sent && strings.Contains(sc.Text(), want) {
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			sent = true
		}
	}
	err := cmd.Wait()
	if !sent {
		t.Fatalf("the job ended (%v) before printing %q:\n%s", err, want, strings.Join(log, "\n"))
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), strings.Join(log, "\n")
}

// Ctrl-C stops a job with exit status 130 and says which checkpoint is
// the last completed one and how to resume from it; the command it names
// resumes the job, and the output equals a failure-free run's.
func TestCtrlCExits130AndNamesTheCheckpointToResumeFrom(t *testing.T) {
	dir := t.TempDir()
	job := []string{"run", "keycount", "--events", "600000", "--keys", "50", "--window", "100ms", "-p", "2", "--progress", "off"}
	ref := filepath.Join(dir, "ref")
	if out, err := exec.Command(weirBinary(t), append(job, "--output", ref)...).CombinedOutput(); err != nil {
		t.Fatalf("reference run: %v\n%s", err, out)
	}
	out, state := filepath.Join(dir, "out"), filepath.Join(dir, "state")
	ft := []string{"--guarantee", "exactly-once", "--checkpoint-interval", "50ms", "--state-dir", state, "--output", out}
	code, stderr := interruptAfter(t, "checkpoint 2 completed", append(append(job, ft...), "--rate", "150000", "--log-checkpoints")...)
	if code != 130 {
		t.Fatalf("exit %d after Ctrl-C, want 130:\n%s", code, stderr)
	}
	last := stderr[strings.LastIndex(stderr, "\n")+1:]
	for _, want := range []string{"weir: job \"keycount\" interrupted; checkpoint ", "is the last completed one", "--restore latest --state-dir " + state} {
		if !strings.Contains(last, want) {
			t.Fatalf("the last line %q lacks %q:\n%s", last, want, stderr)
		}
	}
	if strings.Contains(stderr, "context canceled") {
		t.Fatalf("the message is the bare cancellation:\n%s", stderr)
	}
	res, err := exec.Command(weirBinary(t), append(append(job, ft...), "--restore", "latest")...).CombinedOutput()
	if err != nil {
		t.Fatalf("resumed run: %v\n%s", err, res)
	}
	if err := cli.VerifyLines(weirapi.ExactlyOnce, lines(t, ref), lines(t, out)); err != nil {
		t.Fatalf("output after Ctrl-C and resume is not exactly-once: %v\n%s", err, res)
	}

	// Without --state-dir the checkpoints lived in the process: nothing
	// can be resumed, and the message says so.
	code, stderr = interruptAfter(t, "checkpoint 2 completed", append(job, "--guarantee", "exactly-once", "--checkpoint-interval", "50ms",
		"--output", filepath.Join(dir, "out2"), "--rate", "150000", "--log-checkpoints")...)
	if code != 130 || !strings.Contains(stderr, "no --state-dir), so nothing can be resumed") {
		t.Fatalf("without --state-dir: exit %d\n%s", code, stderr)
	}
}
