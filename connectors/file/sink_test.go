package file

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connector/connectortest"
)

// dirSink remembers the directory of a JSONSink for reading it back.
type dirSink struct {
	connector.Sink[event]
	dir string
}

// readParts decodes every finished part file in dir, by subtask, and checks
// that no in-progress file is left.
func readParts(t *testing.T, dir string) [][]event {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]event
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".inprogress") {
			t.Errorf("in-progress file %s left after Close", e.Name())
		}
	}
	parts, err := Parts(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		s, _, _ := parsePart(filepath.Base(p))
		for len(out) <= s {
			out = append(out, nil)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var e event
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatalf("%s: %q: %v", p, sc.Text(), err)
			}
			out[s] = append(out[s], e)
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestJSONSinkConformance(t *testing.T) {
	connectortest.TestSink(t, connectortest.SinkCase[event]{
		New: func(t *testing.T) connector.Sink[event] {
			dir := filepath.Join(t.TempDir(), "out", "nested") // created by Open
			return dirSink{JSONSink[event](dir), dir}
		},
		ReadBackBySubtask: func(t *testing.T, s connector.Sink[event]) [][]event {
			dir := s.(dirSink).dir
			if _, err := os.Stat(dir); os.IsNotExist(err) {
				return nil
			}
			return readParts(t, dir)
		},
		Records:     append(someEvents(0, 300), event{1, "<&> \"quoted\" \u2028 ü"}),
		Parallelism: []int{1, 2, 3, 5},
	})
}

func TestJSONSinkLayout(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := JSONSink[event](dir).Open(ctx, connector.SubtaskInfo{Subtask: 3, Parallelism: 4})
	if err != nil {
		t.Fatal(err)
	}
	tmp := w.(*jsonWriter[event]).tmp
	if !regexp.MustCompile(`^\.part-3\.jsonl\.[0-9a-f]{16}\.inprogress$`).MatchString(filepath.Base(tmp)) || filepath.Dir(tmp) != dir {
		t.Errorf("in-progress file %s, want %s/.part-3.jsonl.<writer id>.inprogress", tmp, dir)
	}
	final := filepath.Join(dir, "part-3.jsonl")
	if err := w.Write(ctx, []event{{1, "a<b"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(tmp); err != nil || string(b) != "{\"id\":1,\"name\":\"a<b\"}\n" {
		t.Errorf("after Flush, %s = %q, %v", tmp, b, err)
	}
	if _, err := os.Stat(final); !os.IsNotExist(err) {
		t.Errorf("final part exists before Close: %v", err)
	}
	w.Write(ctx, []event{{2, "b"}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(final); err != nil || string(b) != "{\"id\":1,\"name\":\"a<b\"}\n{\"id\":2,\"name\":\"b\"}\n" {
		t.Errorf("after Close, %s = %q, %v", final, b, err)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("in-progress file left after Close: %v", err)
	}
	if parts, err := Parts(dir); err != nil || len(parts) != 1 || parts[0] != final {
		t.Errorf("Parts = %v, %v", parts, err)
	}

	// The output can be read back with JSONLines.
	parts, _ := Parts(dir)
	recs, err := connectortest.ReadAll(context.Background(), JSONLines[event](JSONOptions{}, parts...), 1)
	if err != nil || len(recs[0]) != 2 || recs[0][0].Name != "a<b" {
		t.Errorf("reading the part back: %v, %v", recs, err)
	}
}

// A subtask opened again with the same attempt number while its first
// writer is still open (a process that was cut off, not ended) writes its
// own in-progress file: the first writer's records never mix into it.
func TestJSONSinkReopenedSubtaskWritesItsOwnFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sink := JSONSink[event](dir)
	info := connector.SubtaskInfo{Parallelism: 1}
	w, _ := sink.Open(ctx, info)
	w.Write(ctx, []event{{1, "first writer"}})
	w.Flush(ctx)
	w2, err := sink.Open(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	w2.Write(ctx, []event{{2, "second writer"}})
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
	parts, _ := Parts(dir)
	recs, err := connectortest.ReadAll(ctx, JSONLines[event](JSONOptions{}, parts...), 1)
	if err != nil || len(recs[0]) != 1 || recs[0][0].ID != 2 {
		t.Errorf("the second writer's part: %v, %v; want its record alone", recs, err)
	}
	first := w.(*jsonWriter[event]).tmp
	if b, err := os.ReadFile(first); err != nil || !strings.Contains(string(b), "first writer") || strings.Contains(string(b), "second") {
		t.Errorf("the first writer's in-progress file %s: %q, %v", first, b, err)
	}
	w.(*jsonWriter[event]).f.Close()
}

func TestJSONSinkErrors(t *testing.T) {
	ctx := context.Background()
	notDir := writeFile(t, t.TempDir(), "file", "x")
	_, err := JSONSink[event](notDir).Open(ctx, connector.SubtaskInfo{Parallelism: 1})
	if want := "file: sink directory " + notDir + " exists and is not a directory"; err == nil || err.Error() != want || !errors.Is(err, connector.ErrConfig) {
		t.Errorf("Open on a file: %v, want %q wrapping connector.ErrConfig", err, want)
	}

	// A record that cannot be encoded fails the writer, and Close keeps
	// the in-progress file.
	dir := t.TempDir()
	w, err := JSONSink[func()](dir).Open(ctx, connector.SubtaskInfo{Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(ctx, []func(){func() {}}); err == nil || !strings.Contains(err.Error(), "unsupported type") {
		t.Errorf("Write of a func: %v", err)
	}
	if err := w.Flush(ctx); err == nil {
		t.Error("Flush after a failed Write succeeded")
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := os.Stat(w.(*jsonWriter[func()]).tmp); err != nil {
		t.Errorf("in-progress file of a failed writer: %v", err)
	}
	if parts, _ := Parts(dir); len(parts) != 0 {
		t.Errorf("a failed writer published %v", parts)
	}
}

// "-" is standard output on a command line, never a directory: the sink
// refuses it with a configuration error and creates nothing.
func TestJSONSinkRefusesDash(t *testing.T) {
	t.Chdir(t.TempDir())
	_, err := JSONSink[event]("-").Open(context.Background(), connector.SubtaskInfo{Parallelism: 1})
	if err == nil || !errors.Is(err, connector.ErrConfig) || !strings.Contains(err.Error(), `sink directory "-"`) || !strings.Contains(err.Error(), "standard output") {
		t.Errorf(`Open("-"): %v, want a configuration error about standard output`, err)
	}
	if _, err := os.Stat("-"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(`a directory "-" was created: %v`, err)
	}
}
