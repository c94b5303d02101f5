package cli_test

import (
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
		{[]string{"jobs", "extra"}, `weir: jobs: takes no arguments, got "extra"`},
		{[]string{"cancel"}, "weir: cancel: accepts 1 arg(s), received 0"},
		{[]string{"status", "a", "b"}, "weir: status: accepts at most 1 arg(s), received 2"},
		{[]string{"bench", "frob"}, `weir: bench: unknown command "frob"`},
		{[]string{"nexmark", "generate", "x"}, `weir: nexmark generate: takes no arguments, got "x"`},
		{[]string{"version", "x"}, `weir: version: takes no arguments`},
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
