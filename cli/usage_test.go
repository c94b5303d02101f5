package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-stream/weir/cli"
)

// Every mistake in a command line exits with status 2 and one message
// that starts with a single "weir: ".
func TestEveryBadCommandLineExitsTwoWithOnePrefix(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `weir: unknown command "frobnicate"`},
		{[]string{"runn"}, `did you mean "run"?`},
		{[]string{"--bogus"}, "weir: unknown flag: --bogus (see weir --help)"},
		{[]string{"run", "keycount", "extra"}, `weir: run keycount: takes no arguments, got "extra"`},
		{[]string{"run", "keycount", "--bogus"}, "weir: run keycount: unknown flag: --bogus"},
		{[]string{"run", "keycount", "--events", "x"}, `weir: run keycount: invalid argument "x" for "--events"`},
		{[]string{"run", "keycount", "--state-backend", "rocksdb"}, `weir: --state-backend: unknown state backend "rocksdb": want memory or pebble`},
		{[]string{"run", "keycount", "--state-block-cache", "-1"}, `--state-block-cache and --state-memtables must not be negative`},
		{[]string{"run", "largestate", "--value-bytes", "4"}, `--value-bytes at least 8`},
		{[]string{"jobs", "extra"}, `weir: jobs: takes no arguments, got "extra"`},
		{[]string{"cancel"}, "weir: cancel: accepts 1 arg(s), received 0"},
		{[]string{"status", "a", "b"}, "weir: status: accepts at most 1 arg(s), received 2"},
		{[]string{"bench", "frob"}, `weir: bench: unknown command "frob"`},
		{[]string{"nexmark", "generate", "x"}, `weir: nexmark generate: takes no arguments, got "x"`},
		{[]string{"version", "x"}, `weir: version: takes no arguments`},
		{[]string{"rescale", "--http", "127.0.0.1:1", "-p", "3"}, "weir: rescale: name the operator whose task changes with --operator NAME"},
		{[]string{"rescale", "--http", "127.0.0.1:1", "--operator", "count"}, `weir: rescale: give the new parallelism of "count" with --parallelism N, or as --operator count=N`},
		{[]string{"rescale", "--operator", "count=x"}, `weir: rescale: --operator "count=x": want NAME or NAME=N`},
		{[]string{"rescale", "--operator", "count=2", "--operator", "count=3"}, `weir: rescale: --operator "count" is given parallelism 2 and 3`},
		{[]string{"rescale", "job-1", "--http", "127.0.0.1:1", "-p", "3"}, "weir: rescale: give JOB for a job on a cluster, or --http for the job weir run serves, not both"},
		{[]string{"rescale", "job-1", "--operator", "count"}, "weir: rescale: give the new parallelism of \"count\" with --parallelism N"},
		{[]string{"rescale", "--coordinator", "127.0.0.1:1", "-p", "3"}, "weir: rescale: name the cluster's job to rescale"},
		{[]string{"rescale", "a", "b"}, "weir: rescale: accepts at most 1 arg(s), received 2"},
		{[]string{"sql"}, "weir: give the script with -f FILE or -e SQL"},
		{[]string{"sql", "-e", "SELECT x FROM nope"}, "weir: line 1, column 15: table or view nope not found"},
		{[]string{"sql", "-e", "SELECT 1 FROM"}, "weir: line 1, column 14:"},
		{[]string{"sql", "-e", "SELECT ${X}", "--var", "X"}, `weir: --var "X": want NAME=VALUE`},
		{[]string{"sql", "-e", "CREATE TABLE t (a INT) WITH ('connector' = 'nexmark', 'bogus' = '1'); SELECT a FROM t"}, `bogus`},
		{[]string{"submit", "--coordinator", "127.0.0.1:1"}, "weir: name a job, or a SQL script with --sql FILE"},
		{[]string{"worker", "--exchange-compression", "gzip"}, `weir: --exchange-compression: unknown exchange compression "gzip" (want none|lz4|zstd)`},
	}
	for _, c := range cases {
		code, _, stderr := weir(t, c.args...)
		if code != cli.ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("weir %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, stderr, cli.ExitUsage, c.want)
		}
		if strings.Contains(stderr, "weir: weir") {
			t.Errorf("weir %s: stderr %q repeats the prefix", strings.Join(c.args, " "), stderr)
		}
	}
}

func TestHelpOfACommandGroupSucceeds(t *testing.T) {
	for _, args := range [][]string{{}, {"bench"}, {"help", "run"}} {
		code, stdout, stderr := weir(t, args...)
		if code != 0 || !strings.Contains(stdout, "Usage:") {
			t.Errorf("weir %s: exit %d, stdout %q, stderr %q; want exit 0 and the help", strings.Join(args, " "), code, stdout, stderr)
		}
	}
}

// A configuration error (an --output that is a file, an --input that does
// not exist) and a malformed record under --on-malformed fail fail the job
// at once, naming the path: a restart would meet the same error.
func TestConfigurationErrorsAndMalformedRecordsAreNotRetried(t *testing.T) {
	outFile := filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(outFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := writeEvents(t, `{"key": 1, "time": 5}`, `not json`)
	missing := filepath.Join(t.TempDir(), "missing.jsonl")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "keycount", "--events", "1000", "--output", outFile}, "--output " + outFile + " exists and is not a directory"},
		{[]string{"run", "keycount", "--input", missing, "--output", t.TempDir()}, missing + ": no such file"},
		{[]string{"run", "keycount", "--input", bad, "-p", "1", "--output", t.TempDir()}, "malformed record at " + bad + ":2"},
	}
	for _, c := range cases {
		args := append(c.args, "--guarantee", "exactly-once", "--checkpoint-interval", "10ms", "--restart-delay", "1ms")
		code, _, stderr := weir(t, args...)
		if code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("weir %s: exit %d, stderr %q; want exit 1 and %q", strings.Join(args, " "), code, stderr, c.want)
		}
		if strings.Contains(stderr, "recovery 1") || strings.Contains(stderr, "gave up") {
			t.Errorf("weir %s restarted the job:\n%s", strings.Join(args, " "), stderr)
		}
	}
}

// weir sql runs a bare query and prints its rows in Flink's print
// format; an EXPLAIN statement prints the plans and ends successfully.
func TestWeirSQLPrintsAQueryAndExplainsAnExplain(t *testing.T) {
	code, stdout, stderr := weir(t, "sql", "-p", "1", "-e", "SELECT a * 2 AS b, UPPER(c) FROM (VALUES (1, 'x'), (2, 'y')) AS v(a, c)")
	if code != 0 || !strings.Contains(stdout, "+I[2, X]") || !strings.Contains(stdout, "+I[4, Y]") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = weir(t, "sql", "-e", "EXPLAIN SELECT a FROM (VALUES (1)) AS v(a) WHERE a > 0")
	if code != 0 || !strings.Contains(stdout, "== Optimized plan ==") || !strings.Contains(stdout, "where=[(a > 0)]") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
