package cli_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	weirapi "github.com/weir-stream/weir"
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
	cmd := exec.Command(weirBinary(t), args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var seen int
	var log []string
	for seen < n && sc.Scan() {
		log = append(log, sc.Text())
		if strings.Contains(sc.Text(), want) {
			seen++
		}
	}
	if seen < n {
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
	err = cmd.Wait()
	<-done
	return err != nil // nil: it finished on its own just before the kill
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
	if err := weirapi.VerifyLines(weirapi.ExactlyOnce, lines(t, ref), lines(t, out)); err != nil {
		t.Fatalf("output after kill and restore is not exactly-once: %v\n%s", err, res)
	}
}

func TestRestoreAfterSIGKILL(t *testing.T) { testRestoreAfterKill(t, false) }

func TestRestoreSkipsCorruptCheckpoint(t *testing.T) { testRestoreAfterKill(t, true) }

func TestVerifyEachGuaranteeWithInjectedFailures(t *testing.T) {
	for _, g := range []string{"exactly-once", "at-least-once", "at-most-once"} {
		for seed := 1; seed <= 3; seed++ {
			out := filepath.Join(t.TempDir(), "out")
			code, _, stderr := weir(t, "run", "keycount", "--events", "500000", "--keys", "100", "-p", "2",
				"--guarantee", g, "--checkpoint-interval", "20ms", "--inject-failures", "2",
				"--failure-seed", string(rune('0'+seed)), "--verify", "--output", out, "--progress", "off")
			if code != 0 || !strings.Contains(stderr, "verified "+g) {
				t.Fatalf("%s seed %d: exit %d\n%s", g, seed, code, stderr)
			}
		}
	}
}

// weir run with active standbys: failures injected into primaries (taken
// over) and standbys (replaced), checked against a failure-free run.
func TestVerifyActiveStandbyWithInjectedFailures(t *testing.T) {
	for seed := 1; seed <= 3; seed++ {
		out := filepath.Join(t.TempDir(), "out")
		code, _, stderr := weir(t, "run", "keycount", "--events", "1500000", "--rate", "1000000", "--keys", "1000", "-p", "2",
			"--guarantee", "exactly-once", "--failover", "fine-grained", "--active-standby", "--chaining=false",
			"--checkpoint-interval", "100ms", "--inject-failures", "4", "--failure-seed", string(rune('0'+seed)),
			"--verify", "--output", out, "--progress", "off")
		if code != 0 || !strings.Contains(stderr, "verified exactly-once") || !strings.Contains(stderr, "active standby: 4 of 8 subtasks have one") {
			t.Fatalf("seed %d: exit %d\n%s", seed, code, stderr)
		}
	}
}

func TestRestoreRefusesOtherParallelismAndMissingCheckpoint(t *testing.T) {
	state, out := t.TempDir(), t.TempDir()
	args := []string{"run", "keycount", "--events", "20000", "--keys", "10", "--guarantee", "exactly-once", "--state-dir", state, "--output", out, "--progress", "off"}
	if code, _, stderr := weir(t, append(args, "-p", "2")...); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	code, _, stderr := weir(t, append(args, "-p", "3", "--restore", "latest")...)
	if code != 1 || !strings.Contains(stderr, "restore with parallelism 2 (--parallelism)") {
		t.Fatalf("restore at another parallelism: exit %d\n%s", code, stderr)
	}
	code, _, stderr = weir(t, "run", "keycount", "--guarantee", "exactly-once", "--state-dir", t.TempDir(), "--restore", "latest", "--output", t.TempDir())
	if code != 1 || !strings.Contains(stderr, "no usable checkpoint") {
		t.Fatalf("restore from an empty state dir: exit %d\n%s", code, stderr)
	}
}
