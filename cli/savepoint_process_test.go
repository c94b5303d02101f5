package cli_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	weirapi "github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
)

var (
	completedRE = regexp.MustCompile(`checkpoint (\d+) completed`)
	savepointRE = regexp.MustCompile(`savepoint of checkpoint (\d+) written to (\S+) \(`)
	dashboardRE = regexp.MustCompile(`dashboard at (http://\S+)/,`)
)

// steered is a weir run process whose standard error a test reads line
// by line.
type steered struct {
	cmd   *exec.Cmd
	lines chan string
	log   []string
}

// steer starts weir with args; its standard error is read into a
// channel, so the process never blocks on a full pipe while the test
// does something else.
func steer(t *testing.T, args ...string) *steered {
	t.Helper()
	cmd, sc := startScanned(t, args...)
	s := &steered{cmd: cmd, lines: make(chan string, 1024)}
	go func() {
		defer close(s.lines)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		for range s.lines {
		}
		cmd.Wait()
	})
	return s
}

// until reads lines until one matches re and returns its submatches; it
// fails the test if the process ended first.
func (s *steered) until(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	for line := range s.lines {
		s.log = append(s.log, line)
		if m := re.FindStringSubmatch(line); m != nil {
			return m
		}
	}
	t.Fatalf("the job ended before printing a line matching %q:\n%s", re, strings.Join(s.log, "\n"))
	return nil
}

// completed reads lines until checkpoint n or a later one completed.
func (s *steered) completed(t *testing.T, n int) {
	t.Helper()
	for {
		if id, _ := strconv.Atoi(s.until(t, completedRE)[1]); id >= n {
			return
		}
	}
}

// wait reads the remaining lines and returns the exit status and
// everything the process printed.
func (s *steered) wait(t *testing.T) (int, string) {
	t.Helper()
	for line := range s.lines {
		s.log = append(s.log, line)
	}
	err := s.cmd.Wait()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return s.cmd.ProcessState.ExitCode(), strings.Join(s.log, "\n")
}

// dashboard returns the address of the job's --http API, from its log.
func (s *steered) dashboard(t *testing.T) string {
	t.Helper()
	for _, l := range s.log {
		if m := dashboardRE.FindStringSubmatch(l); m != nil {
			return m[1]
		}
	}
	t.Fatalf("no dashboard address:\n%s", strings.Join(s.log, "\n"))
	return ""
}

func (s *steered) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// savepointKeyCount runs keycount failure-free into ref, then again with
// exactly-once checkpoints into state and savepoints into spDir (or,
// if it is "", into state too), and
// returns the job's command line (at -p 2), its fault-tolerance flags
// (which name state and the output directory out) and the running
// process, once checkpoint 1 completed.
func savepointKeyCount(t *testing.T, spDir string, extra ...string) (job, ft []string, ref, out, state string, s *steered) {
	t.Helper()
	dir := t.TempDir()
	job = []string{"run", "keycount", "--events", "300000", "--keys", "50", "--window", "100ms", "-p", "2", "--progress", "off"}
	ref = filepath.Join(dir, "ref")
	if code, _, stderr := weir(t, append(job, "--output", ref)...); code != 0 {
		t.Fatalf("reference run: exit %d\n%s", code, stderr)
	}
	out, state = filepath.Join(dir, "out"), filepath.Join(dir, "state")
	ft = []string{"--guarantee", "exactly-once", "--checkpoint-interval", "50ms", "--state-dir", state, "--output", out}
	if spDir == "" {
		spDir = state
	}
	args := append(append(append(job, ft...), "--rate", "150000", "--log-checkpoints", "--savepoint-dir", spDir), extra...)
	s = steer(t, args...)
	s.completed(t, 1)
	return job, ft, ref, out, state, s
}

// SIGUSR1 takes a savepoint into --savepoint-dir, here the state
// directory itself. It outlives the checkpoint it copies, which
// retention (--retained-checkpoints 1) deletes, and after a SIGKILL the
// job restores from it at parallelism 3 with the failure-free run's
// output, exactly once.
func TestSavepointOnSIGUSR1RestoresAtAnotherParallelismExactlyOnce(t *testing.T) {
	job, ft, ref, out, state, s := savepointKeyCount(t, "", "--retained-checkpoints", "1")
	s.signal(t, syscall.SIGUSR1)
	m := s.until(t, savepointRE)
	id, path := m[1], m[2]
	n, _ := strconv.Atoi(id)
	s.completed(t, n+5)
	s.signal(t, syscall.SIGKILL)
	s.wait(t)

	if filepath.Dir(path) != state {
		t.Fatalf("the savepoint %s is not in the state directory %s", path, state)
	}
	if _, err := os.Stat(filepath.Join(path, "_savepoint")); err != nil {
		t.Fatalf("the savepoint of checkpoint %s is gone: %v", id, err)
	}
	chks, _ := filepath.Glob(filepath.Join(state, "jobs", "keycount", "chk-*"))
	for _, c := range chks {
		if strings.TrimLeft(strings.TrimPrefix(filepath.Base(c), "chk-"), "0") == id {
			t.Fatalf("retention kept checkpoint %s (%v): the test shows nothing", id, chks)
		}
	}
	code, _, stderr := weir(t, append(append(withParallelism(job, 3), ft...), "--restore", path)...)
	if code != 0 || !strings.Contains(stderr, "restoring savepoint "+path+" (of checkpoint "+id) {
		t.Fatalf("restore from the savepoint at parallelism 3: exit %d\n%s", code, stderr)
	}
	if err := cli.VerifyLines(weirapi.ExactlyOnce, lines(t, ref), lines(t, out)); err != nil {
		t.Fatalf("output after the restore from the savepoint is not exactly-once: %v\n%s", err, stderr)
	}
}

// Without --savepoint-dir, SIGUSR1 says that it takes no savepoint, and
// the job goes on.
func TestSavepointSIGUSR1WithoutSavepointDirSaysSo(t *testing.T) {
	s := steer(t, "run", "keycount", "--events", "300000", "--rate", "150000", "-p", "2", "--progress", "off",
		"--guarantee", "exactly-once", "--checkpoint-interval", "50ms", "--log-checkpoints", "--output", t.TempDir())
	s.completed(t, 1)
	s.signal(t, syscall.SIGUSR1)
	s.until(t, regexp.MustCompile(`SIGUSR1: no savepoint taken: no --savepoint-dir was given`))
	if code, stderr := s.wait(t); code != 0 || !strings.Contains(stderr, "finished in") {
		t.Fatalf("the job after SIGUSR1: exit %d\n%s", code, stderr)
	}
}

// weir stop --http ADDR --savepoint stops a running job after a
// savepoint: the job exits 0 saying so, the command prints the
// savepoint's path, and a run restored from it completes the output
// exactly once. Before, weir savepoint --dir took one that goes on, and
// weir stop without --savepoint was refused.
func TestSavepointStopOverHTTPThenRestoreIsExactlyOnce(t *testing.T) {
	job, ft, ref, out, _, s := savepointKeyCount(t, t.TempDir(), "--http", "127.0.0.1:0")
	url := s.dashboard(t)
	other := t.TempDir()
	code, stdout, stderr := weir(t, "savepoint", "--http", url, "--dir", other)
	if sp := strings.TrimSpace(stdout); code != 0 || filepath.Dir(sp) != other || !strings.Contains(stderr, "written to "+sp) {
		t.Fatalf("weir savepoint --dir %s: exit %d, stdout %q\n%s", other, code, stdout, stderr)
	} else if _, err := os.Stat(filepath.Join(sp, "_savepoint")); err != nil {
		t.Fatalf("weir savepoint printed %s: %v", sp, err)
	}
	code, _, stderr = weir(t, "stop", "--http", url)
	if code != cli.ExitUsage || !strings.Contains(stderr, "give --savepoint") {
		t.Fatalf("weir stop without --savepoint: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr = weir(t, "stop", "--http", url, "--savepoint")
	if code != 0 {
		t.Fatalf("weir stop: exit %d\n%s", code, stderr)
	}
	path := strings.TrimSpace(stdout)
	jobCode, log := s.wait(t)
	if jobCode != 0 || !strings.Contains(log, "stopped after the savepoint of checkpoint") ||
		!strings.Contains(log, "stopped after the savepoint "+path) {
		t.Fatalf("the stopped job: exit %d, want 0 and that it stopped after %s\n%s", jobCode, path, log)
	}
	code, _, stderr = weir(t, append(append(job, ft...), "--restore", path)...)
	if code != 0 {
		t.Fatalf("restore from the savepoint of weir stop: exit %d\n%s", code, stderr)
	}
	if err := cli.VerifyLines(weirapi.ExactlyOnce, lines(t, ref), lines(t, out)); err != nil {
		t.Fatalf("output after stop and restore is not exactly-once: %v\n%s", err, stderr)
	}
}

// A savepoint with a flipped byte in a state blob, or without its
// _savepoint, is refused with exit status 1 naming its path, before
// anything is read; the intact savepoint then still restores the
// output exactly once.
func TestSavepointCorruptIsRefusedNamingThePath(t *testing.T) {
	job, ft, ref, out, _, s := savepointKeyCount(t, t.TempDir())
	s.signal(t, syscall.SIGUSR1)
	path := s.until(t, savepointRE)[2]
	s.signal(t, syscall.SIGKILL)
	s.wait(t)

	flipped := copySavepoint(t, path)
	flipLargestStateBlob(t, flipped)
	headless := copySavepoint(t, path)
	if err := os.Remove(filepath.Join(headless, "_savepoint")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, says string }{{flipped, "checksum mismatch"}, {headless, "there is no _savepoint"}} {
		code, _, stderr := weir(t, append(append(job, ft...), "--restore", c.path)...)
		if code != 1 || !strings.Contains(stderr, c.path) || !strings.Contains(stderr, c.says) || strings.Contains(stderr, "records read") {
			t.Errorf("restore from %s: exit %d, want 1, the path and %q, and nothing read\n%s", c.path, code, c.says, stderr)
		}
	}
	code, _, stderr := weir(t, append(append(job, ft...), "--restore", path)...)
	if code != 0 {
		t.Fatalf("restore from the intact savepoint: exit %d\n%s", code, stderr)
	}
	if err := cli.VerifyLines(weirapi.ExactlyOnce, lines(t, ref), lines(t, out)); err != nil {
		t.Fatalf("output after the refused restores is not exactly-once: %v\n%s", err, stderr)
	}
}

// copySavepoint copies the savepoint directory path into a new
// directory under the same name and returns the copy's path.
func copySavepoint(t *testing.T, path string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), filepath.Base(path))
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(path, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}

// weir stop --drain --savepoint over HTTP drains the job before its
// savepoint (its log names the drained checkpoint, the stop says so)
// and weir run exits 0 after it.
func TestSavepointStopWithDrainOverHTTPDrainsAndStops(t *testing.T) {
	_, _, _, _, _, s := savepointKeyCount(t, t.TempDir(), "--http", "127.0.0.1:0")
	url := s.dashboard(t)
	code, stdout, stderr := weir(t, "stop", "--http", url, "--savepoint", "--drain")
	path := strings.TrimSpace(stdout)
	if code != 0 || !strings.Contains(stderr, "the job drained and stops") {
		t.Fatalf("weir stop --drain: exit %d, stdout %q\n%s", code, stdout, stderr)
	}
	jobCode, log := s.wait(t)
	m := regexp.MustCompile(`checkpoint (\d+) drains the job`).FindStringSubmatch(log)
	if jobCode != 0 || m == nil || !strings.Contains(log, "savepoint of checkpoint "+m[1]+" written to "+path) ||
		!strings.Contains(log, "stopped after the savepoint of checkpoint "+m[1]) {
		t.Fatalf("the drained job: exit %d, want 0, a drained checkpoint, its savepoint %s and the stop after it\n%s", jobCode, path, log)
	}
}
