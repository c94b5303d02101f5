package cli_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	weirapi "github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/connectors/file"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// weirBinary builds the weir command once per test run.
func weirBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "weir-bin")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "weir")
		out, err := exec.Command("go", "build", "-o", binary, "../cmd/weir").CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("%s", out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building weir: %v", buildErr)
	}
	return binary
}

func lines(t *testing.T, dir string) []string {
	t.Helper()
	out, err := file.ReadLines(dir)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// killAfter runs weir with args, waits until it printed want on standard
// error, and kills it with SIGKILL.
func killAfter(t *testing.T, want string, args ...string) {
	t.Helper()
	if !killAfterCount(t, want, 1, args...) {
		t.Fatalf("the job ended before printing %q or before it was killed", want)
	}
}

// killAfterCount runs weir with args, waits until it printed n lines
// containing want on standard error, and kills it with SIGKILL. It returns
// false if the job ended first (it had nothing left to do); it fails the
// test if the job failed first.
func killAfterCount(t *testing.T, want string, n int, args ...string) bool {
	t.Helper()
	seen := 0
	return killWhen(t, func(line string) bool {
		if strings.Contains(line, want) {
			seen++
		}
		return seen >= n
	}, args...)
}

// killWhen runs weir with args and kills it with SIGKILL as soon as ready
// returns true for a line it printed on standard error. It returns false
// if the job ended first; it fails the test if the job failed first.
func killWhen(t *testing.T, ready func(line string) bool, args ...string) bool {
	t.Helper()
	cmd, sc := startScanned(t, args...)
	var log []string
	found := false
	for !found && sc.Scan() {
		log = append(log, sc.Text())
		found = ready(sc.Text())
	}
	if !found {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("the job failed before it was killed: %v\n%s", err, strings.Join(log, "\n"))
		}
		return false
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { // drain, so the process never blocks on a full pipe
		defer close(done)
		for sc.Scan() {
		}
	}()
	err := cmd.Wait()
	<-done
	return err != nil // nil: it finished on its own just before the kill
}

// startScanned starts weir with args and returns the process and a
// scanner of what it prints on standard error.
func startScanned(t *testing.T, args ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(weirBinary(t), args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewScanner(stderr)
}

// Kill the whole process mid-run with SIGKILL, start it again with
// --restore latest, and the output equals a failure-free run's. With
// corrupt set, the newest checkpoint is damaged first, and the restore
// falls back to the one before.
func testRestoreAfterKill(t *testing.T, corrupt bool) {
	dir := t.TempDir()
	job := []string{"run", "keycount", "--events", "300000", "--keys", "50", "--window", "100ms", "-p", "2", "--progress", "off"}
	ref := filepath.Join(dir, "ref")
	if out, err := exec.Command(weirBinary(t), append(job, "--output", ref)...).CombinedOutput(); err != nil {
		t.Fatalf("reference run: %v\n%s", err, out)
	}
	out, state := filepath.Join(dir, "out"), filepath.Join(dir, "state")
	ft := []string{"--guarantee", "exactly-once", "--checkpoint-interval", "50ms", "--state-dir", state, "--output", out}
	killAfter(t, "checkpoint 4 completed", append(append(job, ft...), "--rate", "150000", "--log-checkpoints")...)
	if corrupt {
		metas, _ := filepath.Glob(filepath.Join(state, "jobs", "keycount", "chk-*", "_metadata"))
		if len(metas) < 2 {
			t.Fatalf("want at least 2 retained checkpoints, got %v", metas)
		}
		newest := metas[len(metas)-1]
		data, _ := os.ReadFile(newest)
		data[len(data)-3] ^= 0xff
		os.WriteFile(newest, data, 0o644)
	}
	res, err := exec.Command(weirBinary(t), append(append(job, ft...), "--restore", "latest")...).CombinedOutput()
	if err != nil {
		t.Fatalf("restored run: %v\n%s", err, res)
	}
	if corrupt && !strings.Contains(string(res), "is unusable") {
		t.Fatalf("the corrupt checkpoint was not reported:\n%s", res)
	}
	if !strings.Contains(string(res), "restoring checkpoint") {
		t.Fatalf("no restore reported:\n%s", res)
	}
	if err := cli.VerifyLines(weirapi.ExactlyOnce, lines(t, ref), lines(t, out)); err != nil {
		t.Fatalf("output after kill and restore is not exactly-once: %v\n%s", err, res)
	}
}

func TestRestoreAfterSIGKILL(t *testing.T) { testRestoreAfterKill(t, false) }

func TestRestoreSkipsCorruptCheckpoint(t *testing.T) { testRestoreAfterKill(t, true) }

// runFacts are what weir run's report says happened.
type runFacts struct {
	injected, recoveries, takeovers int
}

var (
	injectedRE = regexp.MustCompile(`(?m)^weir: (\d+) failures injected$`)
	recoveryRE = regexp.MustCompile(`(?m)^weir: recovery \d+: (taken over by an active standby)?`)
)

func factsOf(stderr string) runFacts {
	var f runFacts
	if m := injectedRE.FindStringSubmatch(stderr); m != nil {
		f.injected, _ = strconv.Atoi(m[1])
	}
	for _, m := range recoveryRE.FindAllStringSubmatch(stderr, -1) {
		f.recoveries++
		if m[1] != "" {
			f.takeovers++
		}
	}
	return f
}

// verifiedRuns runs args with --failure-seed 1, 2, ... until want runs
// passed --verify in which happened(facts) held, and fails the test if a
// run does not verify (or its output lacks one of must) or if 12 seeds do
// not give want such runs. Whether an
// injected failure lands before the job ends depends on the machine's
// load, so seeds whose failures did not happen are skipped, not counted.
func verifiedRuns(t *testing.T, verified string, must []string, want int, happened func(runFacts) bool, args ...string) {
	t.Helper()
	got := 0
	var skipped []string
	for seed := 1; got < want; seed++ {
		if seed > 12 {
			t.Fatalf("only %d of 12 seeds had the failures the test needs (want %d); the others: %s", got, want, strings.Join(skipped, "; "))
		}
		out := filepath.Join(t.TempDir(), "out")
		code, _, stderr := weir(t, append(args, "--failure-seed", strconv.Itoa(seed), "--verify", "--output", out, "--progress", "off")...)
		if code != 0 || !strings.Contains(stderr, "verified "+verified) {
			t.Fatalf("seed %d: exit %d\n%s", seed, code, stderr)
		}
		for _, m := range must {
			if !strings.Contains(stderr, m) {
				t.Fatalf("seed %d: no %q in\n%s", seed, m, stderr)
			}
		}
		f := factsOf(stderr)
		if !happened(f) {
			skipped = append(skipped, fmt.Sprintf("seed %d: %+v", seed, f))
			continue
		}
		got++
	}
}

// weir run --verify with failures injected, for each guarantee: every run
// passes the check, and at least three runs per guarantee had a failure
// and recovered from it. Under exactly-once, --verify also checks every
// checkpoint to be a consistent cut, and says how many it checked.
func TestVerifyEachGuaranteeWithInjectedFailures(t *testing.T) {
	for _, g := range []string{"exactly-once", "at-least-once", "at-most-once"} {
		var must []string
		if g == "exactly-once" {
			must = []string{"checked as consistent cuts"}
		}
		verifiedRuns(t, g, must, 3, func(f runFacts) bool { return f.injected > 0 && f.recoveries > 0 },
			"run", "keycount", "--events", "500000", "--rate", "1000000", "--keys", "100", "-p", "2",
			"--guarantee", g, "--checkpoint-interval", "20ms", "--inject-failures", "2")
	}
}

// weir run with active standbys: failures injected into primaries (taken
// over) and standbys (replaced), checked against a failure-free run; at
// least three runs had a standby take its primary's place.
func TestVerifyActiveStandbyWithInjectedFailures(t *testing.T) {
	verifiedRuns(t, "exactly-once", []string{"active standby: 4 of 8 subtasks have one"}, 3, func(f runFacts) bool { return f.takeovers > 0 },
		"run", "keycount", "--events", "1500000", "--rate", "1000000", "--keys", "1000", "-p", "2",
		"--guarantee", "exactly-once", "--failover", "fine-grained", "--active-standby", "--chaining=false",
		"--checkpoint-interval", "100ms", "--inject-failures", "4")
}

// weir run --verify of Nexmark q4, whose output is a changelog, with
// active standbys and failures injected: every run verifies, though the
// changelog's updates follow the order in which q4-average merged its two
// inputs, which differs from the failure-free run's.
func TestVerifyNexmarkChangelogWithActiveStandby(t *testing.T) {
	verifiedRuns(t, "exactly-once", []string{"active standby: 2 of 10 subtasks have one"}, 2, func(f runFacts) bool { return f.recoveries > 0 },
		"run", "nexmark", "--query", "q4", "--events", "300000", "-p", "2",
		"--guarantee", "exactly-once", "--failover", "fine-grained", "--active-standby", "--chaining=false",
		"--checkpoint-interval", "100ms", "--inject-failures", "4")
}

// A restore from a state directory without checkpoints is refused. (A
// source that cannot move its positions to another parallelism is
// refused by task.Rescale, tested there and in internal/operator/source:
// every built-in source that runs without a server can move them.)
func TestRestoreRefusesMissingCheckpoint(t *testing.T) {
	code, _, stderr := weir(t, "run", "keycount", "--guarantee", "exactly-once", "--state-dir", t.TempDir(), "--restore", "latest", "--output", t.TempDir())
	if code != 1 || !strings.Contains(stderr, "no usable checkpoint") {
		t.Fatalf("restore from an empty state dir: exit %d\n%s", code, stderr)
	}
}
