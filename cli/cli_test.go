package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/weir-stream/weir/cli"
	_ "github.com/weir-stream/weir/cli/jobs"
)

// TestMain checks for leaked goroutines and removes the weir binary the
// process tests built (weirBinary).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if binary != "" {
			os.RemoveAll(filepath.Dir(binary))
		}
		os.Exit(code)
	}))
}

func weir(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = cli.Run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestUnknownJob(t *testing.T) {
	code, _, stderr := weir(t, "run", "wordcuont", "--input", "x")
	if code != cli.ExitUsage {
		t.Fatalf("exit %d, want %d", code, cli.ExitUsage)
	}
	for _, want := range []string{`unknown job "wordcuont"`, "keycount", "wordcount"} {
		if !strings.Contains(stderr, want) {
			t.Fatalf("stderr %q lacks %q", stderr, want)
		}
	}
}

func TestBadFlags(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "keycount", "--evnets", "5"}, "unknown flag: --evnets"},
		{[]string{"run", "keycount", "--events", "five"}, `invalid argument "five" for "--events"`},
		{[]string{"run", "keycount", "--keys", "0"}, "--keys must be at least 1"},
		{[]string{"run", "keycount", "--parallelism", "0"}, "--parallelism must be between 1"},
		{[]string{"run", "keycount", "--on-malformed", "ignore"}, `"fail" or "skip"`},
		{[]string{"run", "wordcount"}, "--input is required"},
		{[]string{"run", "keycount", "--active-standby"}, "--active-standby needs --failover fine-grained"},
		{[]string{"bench", "nexmark", "--verify"}, "--verify belongs to weir run"},
		{[]string{"worker", "--coordinator", "127.0.0.1:1", "--cpus", "-1"}, "--cpus must be at least 1"},
	}
	for _, c := range cases {
		code, _, stderr := weir(t, c.args...)
		if code != cli.ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, stderr, cli.ExitUsage, c.want)
		}
	}
}

func TestExplainPrintsThePlan(t *testing.T) {
	code, stdout, stderr := weir(t, "run", "keycount", "--explain", "-p", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"task 0 [parallelism 3]: events", "count -> format -> output", `<- task 0 "events" via HASH`} {
		if !strings.Contains(stdout, want) {
			t.Fatalf("plan lacks %q:\n%s", want, stdout)
		}
	}
}

func TestKeyCountWritesPartFilesAndReplacesOldOnes(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := weir(t, "run", "keycount", "--events", "10000", "--keys", "10", "-p", "4", "--output", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, _, stderr = weir(t, "run", "keycount", "--events", "10000", "--keys", "10", "-p", "2", "--output", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	parts, _ := filepath.Glob(filepath.Join(dir, "part-*.jsonl"))
	if len(parts) != 2 {
		t.Fatalf("got part files %v, want the 2 of the second run", parts)
	}
	if !strings.Contains(stderr, "10000 records read, 10 records written") {
		t.Fatalf("summary: %q", stderr)
	}
}

func writeEvents(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMalformedInputFailsNamingTheLine(t *testing.T) {
	in := writeEvents(t, `{"key": 1, "time": 5}`, `{"key": 2, "time": 6}`, `{"key": 3, "time": `, `{"key": 1, "time": 7}`)
	code, _, stderr := weir(t, "run", "keycount", "--input", in, "-p", "1", "--output", t.TempDir())
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr %q", code, stderr)
	}
	if !strings.Contains(stderr, "malformed record at "+in+":3") {
		t.Fatalf("stderr %q does not name %s:3", stderr, in)
	}
}

func TestMalformedInputSkippedAndCounted(t *testing.T) {
	in := writeEvents(t, `{"key": 1, "time": 5}`, `not json`, `{"key": 1, "time": 7}`)
	out := t.TempDir()
	code, _, stderr := weir(t, "run", "keycount", "--input", in, "-p", "2", "--output", out, "--on-malformed", "skip")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "skipped 1 malformed records") || !strings.Contains(stderr, in+":2") {
		t.Fatalf("stderr %q does not report the skipped line", stderr)
	}
	data, _ := os.ReadFile(filepath.Join(out, "part-0.jsonl"))
	more, _ := os.ReadFile(filepath.Join(out, "part-1.jsonl"))
	if got := string(data) + string(more); !strings.Contains(got, `"key":1,"window_start":0,"window_end":1000,"count":2`) {
		t.Fatalf("output %q lacks the count of the two good events", got)
	}
}

func TestWordCountToStdout(t *testing.T) {
	in := writeEvents(t, "a b a", "c a")
	code, stdout, stderr := weir(t, "run", "wordcount", "--input", in, "-p", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	slices.Sort(lines)
	want := []string{`{"word":"a","count":3}`, `{"word":"b","count":1}`, `{"word":"c","count":1}`}
	if !slices.Equal(lines, want) {
		t.Fatalf("stdout %q, want %q", lines, want)
	}
}

func TestHTTPFlagStartsServerAndRejectsBadAddress(t *testing.T) {
	code, _, stderr := weir(t, "run", "keycount", "--events", "1000", "--http", "127.0.0.1:0", "--output", t.TempDir())
	if code != 0 || !strings.Contains(stderr, "/metrics") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	code, _, stderr = weir(t, "run", "keycount", "--events", "10", "--http", "256.0.0.1:99999")
	if code != cli.ExitUsage || !strings.Contains(stderr, "--http") {
		t.Fatalf("bad address: exit %d\n%s", code, stderr)
	}
}

// An event without "key" or "time", or a bare null, is malformed, not an
// event of key 0 at time 0: --on-malformed fail names the file, line, byte
// offset and the missing field; skip counts it.
func TestKeyCountEventsMissingAFieldAreMalformed(t *testing.T) {
	in := writeEvents(t, `{"key": 1, "time": 5}`, `{"key": 2}`, `null`, `{"time": 7}`, `{"key": 3, "time": null}`, `{"key": 1, "time": 9}`)
	code, _, stderr := weir(t, "run", "keycount", "--input", in, "-p", "1", "--output", t.TempDir())
	if want := "malformed record at " + in + `:2 (byte 22): json: cannot decode jobs.KeyEvent: missing field "time"`; code != 1 || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, stderr %q; want exit 1 and %q", code, stderr, want)
	}
	out := t.TempDir()
	code, _, stderr = weir(t, "run", "keycount", "--input", in, "-p", "1", "--output", out, "--on-malformed", "skip")
	if code != 0 || !strings.Contains(stderr, "skipped 4 malformed records") {
		t.Fatalf("exit %d, stderr %q; want 4 skipped", code, stderr)
	}
	data, _ := os.ReadFile(filepath.Join(out, "part-0.jsonl"))
	if got, want := string(data), `{"key":1,"window_start":0,"window_end":1000,"count":2}`+"\n"; got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
}

// Words that differ only in bytes that are not UTF-8 would become one
// "\ufffd" word in JSON output, written several times: a line with such
// bytes is malformed.
func TestWordCountLinesWithInvalidUTF8AreMalformed(t *testing.T) {
	in := writeEvents(t, "a b", "x\xffy \xfe", "\xfd", "b c")
	code, _, stderr := weir(t, "run", "wordcount", "--input", in, "-p", "1")
	if want := "malformed record at " + in + `:2 (byte 4): invalid UTF-8 at byte 1 ("\xffy \xfe")`; code != 1 || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, stderr %q; want exit 1 and %q", code, stderr, want)
	}
	code, stdout, stderr := weir(t, "run", "wordcount", "--input", in, "-p", "2", "--on-malformed", "skip")
	if code != 0 || !strings.Contains(stderr, "skipped 2 malformed records") {
		t.Fatalf("exit %d, stderr %q; want 2 skipped", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	slices.Sort(lines)
	if want := []string{`{"word":"a","count":1}`, `{"word":"b","count":2}`, `{"word":"c","count":1}`}; !slices.Equal(lines, want) {
		t.Fatalf("stdout %q, want %q", lines, want)
	}
}

func TestBenchNexmarkRunsTheQueryFromItsPublishedSQL(t *testing.T) {
	code, stdout, stderr := weir(t, "bench", "nexmark", "--sql", "-q", "q5", "--events", "20000", "-p", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.HasPrefix(stdout, "q5 (SQL): 20000 events, parallelism 2,") {
		t.Fatalf("summary %q", stdout)
	}
	code, _, stderr = weir(t, "bench", "nexmark", "--sql", "-q", "q99")
	if code != cli.ExitUsage || !strings.Contains(stderr, `no published Nexmark SQL for "q99"`) {
		t.Fatalf("q99: exit %d, stderr %q", code, stderr)
	}
}
