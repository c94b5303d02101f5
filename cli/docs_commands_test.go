package cli_test

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-stream/weir/cli"
)

// docCommands returns the weir command lines in the sh blocks of a
// Markdown file (continuation lines joined), as arguments after "weir",
// each with the line it starts on.
func docCommands(t *testing.T, path string) (cmds [][]string, lines []int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	inSh, n, start := false, 0, 0
	var cur string
	for sc.Scan() {
		n++
		l := sc.Text()
		trimmed := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			inSh = !inSh && (trimmed == "```sh" || trimmed == "```bash" || trimmed == "```shell")
			continue
		case !inSh:
			continue
		}
		if cur == "" {
			start = n
		}
		cur += strings.TrimSuffix(trimmed, "\\") + " "
		if strings.HasSuffix(trimmed, "\\") {
			continue
		}
		line := cur
		cur = ""
		words := shellWords(line)
		for i := 0; i < len(words); i++ {
			if words[i] == "weir" || (words[i] == "./cmd/weir" && i > 0 && words[i-1] == "run") {
				cmd := words[i+1:]
				for j, w := range cmd { // up to the end of the command
					if w == "|" || w == "&" || w == "&&" || w == ";" || w == ">" || strings.HasPrefix(w, "#") || strings.HasPrefix(w, "2>") {
						cmd = cmd[:j]
						break
					}
				}
				cmds, lines = append(cmds, cmd), append(lines, start)
				break
			}
		}
	}
	return cmds, lines
}

// shellWords splits a command line as sh would for plain words, single
// and double quotes.
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// Every weir command in the README and docs names a command that exists
// and flags it has, with values that parse: the examples do not drift
// from the program. (Running them needs inputs and servers; this checks
// the command lines only.)
func TestDocumentedCommandLinesParse(t *testing.T) {
	files, _ := filepath.Glob("../docs/*.md")
	more, _ := filepath.Glob("../docs/*/*.md")
	files = append(append([]string{"../README.md"}, files...), more...)
	checked := 0
	for _, path := range files {
		cmds, lines := docCommands(t, path)
		for i, args := range cmds {
			if len(args) == 0 || strings.Contains(strings.Join(args, " "), "...") || strings.ContainsAny(strings.Join(args, " "), "$<[{") {
				t.Logf("skip %s:%d: %q", path, lines[i], args)
				continue // a placeholder, not a command to check
			}
			root := cli.Command(io.Discard, io.Discard)
			cmd, rest, err := root.Find(args)
			if err == nil && cmd == root && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
				err = errUnknown(rest[0])
			}
			if err == nil && !cmd.DisableFlagParsing {
				err = cmd.ParseFlags(rest)
			}
			if err != nil {
				t.Errorf("%s:%d: weir %s: %v", path, lines[i], strings.Join(args, " "), err)
			}
			checked++
		}
	}
	t.Logf("checked %d documented command lines", checked)
	if checked < 20 {
		t.Errorf("checked %d documented command lines; the extraction found too few", checked)
	}
}

type errUnknown string

func (e errUnknown) Error() string { return "unknown command " + string(e) }
