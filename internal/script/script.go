// Package script runs data-driven tests of pure state machines: stories
// in a package's testdata/*.txt, each a sequence of blocks of a command
// line, a "----" line and the expected output, ended by a blank line or
// the end of the file:
//
//	init tasks=3
//	----
//	ok
//
// Lines starting with "#" and blank lines between blocks are comments.
// With -rewrite the expected outputs are replaced by the actual ones.
// The package under test parses and runs the commands.
package script

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/*.txt with the actual output")

// Run runs every story in testdata/*.txt as a subtest. For each story it
// calls newStory for a fresh command runner, which returns a command's
// output, or an error for a malformed command (which fails the test).
func Run(t *testing.T, newStory func() func(line string) (string, error)) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in testdata: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			runFile(t, file, newStory())
		})
	}
}

func runFile(t *testing.T, file string, run func(line string) (string, error)) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var out strings.Builder
	for i := 0; i < len(lines); {
		line := lines[i]
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			out.WriteString(line + "\n")
			i++
			continue
		}
		if i+1 >= len(lines) || lines[i+1] != "----" {
			t.Fatalf("%s:%d: command without a ---- line after it", file, i+1)
		}
		end := i + 2
		for end < len(lines) && lines[end] != "" {
			end++
		}
		want := strings.Join(lines[i+2:end], "\n")
		got, err := run(line)
		if err != nil {
			t.Fatalf("%s:%d: %s: %v", file, i+1, line, err)
		}
		if got != want && !*rewrite {
			t.Errorf("%s:%d: %s\n--- got\n%s\n--- want\n%s", file, i+1, line, got, want)
		}
		fmt.Fprintf(&out, "%s\n----\n%s\n", line, got)
		i = end
	}
	if *rewrite {
		if err := os.WriteFile(file, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
