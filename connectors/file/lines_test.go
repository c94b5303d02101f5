package file

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connector/connectortest"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o666); err != nil {
		t.Fatal(err)
	}
	return p
}

// splitLines is the reference: the lines of content as Lines reads them.
func splitLines(content string) []string {
	if content == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// manyLines returns n lines of varying length, some empty, some repeated.
func manyLines(n int) string {
	var b strings.Builder
	for i := range n {
		switch {
		case i%17 == 5:
			b.WriteString("\n")
		case i%11 == 3:
			b.WriteString("again\n")
		default:
			fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("ab", i%23))
		}
	}
	return b.String()
}

// inputs are file sets to test the line sources with: name -> contents.
var inputs = []struct {
	name  string
	files []string
}{
	{"one", []string{manyLines(200)}},
	{"crlf", []string{"a\r\nb\r\n\r\nc\r\n", "d\re\r\n"}},
	{"no-trailing-newline", []string{"x\ny\nlast", "first\nsecond"}},
	{"empty-files", []string{"", "a\nb\n", "", "", "c\n", ""}},
	{"all-empty", []string{"", ""}},
	{"only-newlines", []string{"\n", "\n\n\n"}},
	{"none", nil},
	{"mixed", []string{manyLines(50), "", "tail without newline", "\n", manyLines(30)}},
}

func writeInput(t *testing.T, files []string) (paths []string, want []string) {
	dir := t.TempDir()
	for i, c := range files {
		paths = append(paths, writeFile(t, dir, fmt.Sprintf("in%d.txt", i), c))
		want = append(want, splitLines(c)...)
	}
	return paths, want
}

func TestLinesConformance(t *testing.T) {
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			paths, want := writeInput(t, in.files)
			for name, src := range map[string]func() connector.Source[string]{
				"Lines":     func() connector.Source[string] { return Lines(paths...) },
				"TextLines": func() connector.Source[string] { return TextLines(Options{}, paths...) },
			} {
				t.Run(name, func(t *testing.T) {
					connectortest.TestSource(t, connectortest.SourceCase[string]{
						New:         func(*testing.T) connector.Source[string] { return src() },
						Want:        want,
						Parallelism: []int{1, 2, 3, 5, 8},
						BadPositions: []connector.Position{
							{0x80}, {0x00}, {0x00, 0x01, 0x02},
							encodePosition(len(paths)+1, 0), encodePosition(len(paths), 1),
							encodePosition(0, 1<<40),
						},
					})
				})
			}
		})
	}
}

// TestLinesSplit checks that the split is by byte ranges: the subtasks in
// order yield the lines in order.
func TestLinesSplit(t *testing.T) {
	long := strings.Repeat("L", readBufferSize*3/2)
	cases := append(inputs, struct {
		name  string
		files []string
	}{"long-lines", []string{"a\n" + long + "\nb\n" + long, long + "\r\n"}})
	for _, in := range cases {
		t.Run(in.name, func(t *testing.T) {
			paths, want := writeInput(t, in.files)
			for n := 1; n <= 8; n++ {
				got, err := connectortest.ReadAll(t.Context(), Lines(paths...), n)
				if err != nil {
					t.Fatalf("n=%d: %v", n, err)
				}
				if d := connectortest.DiffSequence(slices.Concat(got...), want); d != "" {
					t.Errorf("n=%d: subtasks concatenated %s", n, d)
				}
			}
		})
	}
}

// TestLinesSplitBalance checks that one big file is read in parallel.
func TestLinesSplitBalance(t *testing.T) {
	paths, want := writeInput(t, []string{manyLines(4000)})
	got, err := connectortest.ReadAll(t.Context(), Lines(paths...), 4)
	if err != nil {
		t.Fatal(err)
	}
	for s, seq := range got {
		if len(seq) < len(want)/8 {
			t.Errorf("subtask %d of 4 read %d of %d lines", s, len(seq), len(want))
		}
	}
}

func TestLinesPositionErrors(t *testing.T) {
	dir := t.TempDir()
	paths := []string{writeFile(t, dir, "a.txt", "hello\nworld\n"), writeFile(t, dir, "b.txt", "x\n")}
	src := Lines(paths...)
	for _, tc := range []struct {
		info connector.SubtaskInfo
		pos  connector.Position
		msg  string
	}{
		{connector.SubtaskInfo{Parallelism: 1}, connector.Position{0x05}, "file: corrupt position 05: want two uvarints, file index and byte offset"},
		{connector.SubtaskInfo{Parallelism: 1}, encodePosition(0, 3), "file: position (file 0, byte 3) is not at the start of a line in " + paths[0]},
		{connector.SubtaskInfo{Parallelism: 1}, encodePosition(0, 13), "is beyond the end of " + paths[0] + " (12 bytes)"},
		{connector.SubtaskInfo{Parallelism: 1}, encodePosition(3, 0), "is beyond the 2 files"},
		{connector.SubtaskInfo{Subtask: 1, Parallelism: 2}, encodePosition(0, 0), "lies before the subtask's split; positions are valid only for the subtask (here 1 of 2)"},
	} {
		_, err := src.Open(t.Context(), tc.info, tc.pos)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Open(%+v, %x) = %v, want error containing %q", tc.info, []byte(tc.pos), err, tc.msg)
		}
	}
	if _, err := Lines(filepath.Join(dir, "missing")).Open(t.Context(), connector.SubtaskInfo{Parallelism: 1}, nil); err == nil ||
		!strings.Contains(err.Error(), "no such file") || !errors.Is(err, connector.ErrConfig) {
		t.Errorf("missing file: %v, want a connector.ErrConfig", err)
	}
	if _, err := Lines(dir).Open(t.Context(), connector.SubtaskInfo{Parallelism: 1}, nil); err == nil ||
		!strings.Contains(err.Error(), "is a directory") || !errors.Is(err, connector.ErrConfig) {
		t.Errorf("a directory: %v, want a connector.ErrConfig", err)
	}
}

func TestLinesAllocs(t *testing.T) {
	paths, _ := writeInput(t, []string{strings.Repeat("some line of text\n", 6000)})
	r, err := Lines(paths...).Open(t.Context(), connector.SubtaskInfo{Parallelism: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]string, 100)
	r.Read(t.Context(), buf) // opens the file
	if a := testing.AllocsPerRun(50, func() { r.Read(t.Context(), buf) }); a > float64(len(buf)) {
		t.Errorf("Read of %d lines allocates %v times", len(buf), a)
	}
}

// A file that shrinks while it is read (truncated at a line boundary, as
// a log rotation would) fails the reader naming the file and both sizes,
// instead of ending early as if the input were complete.
func TestLinesFailsWhenAFileShrinksWhileRead(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 0; b.Len() < 4*readBufferSize; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	content := b.String()
	path := writeFile(t, dir, "in.txt", content)
	r, err := Lines(path).Open(t.Context(), connector.SubtaskInfo{Parallelism: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]string, 10)
	if n, err := r.Read(t.Context(), buf); n != 10 || err != nil {
		t.Fatalf("first Read = %d, %v", n, err)
	}
	cut := strings.LastIndexByte(content[:2*readBufferSize], '\n') + 1
	if err := os.Truncate(path, int64(cut)); err != nil {
		t.Fatal(err)
	}
	read := 10
	for {
		n, err := r.Read(t.Context(), buf)
		read += n
		if err == nil {
			continue
		}
		want := fmt.Sprintf("file: %s shrank while being read: it had %d bytes when opened but ended at byte %d", path, len(content), cut)
		if !strings.Contains(err.Error(), want) || !errors.Is(err, connector.ErrConfig) {
			t.Fatalf("after %d lines: %v\nwant a connector.ErrConfig saying %q", read, err, want)
		}
		return
	}
}
