package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connector/connectortest"
)

// writeSegments writes each segment's content to dir/<name>.
func writeSegments(t *testing.T, dir string, segs map[string]string) {
	t.Helper()
	for name, content := range segs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o666); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSegmentSourceConformance(t *testing.T) {
	segs := map[string]string{
		"1.log":     "a\nb\n\nc\n",
		"2.log":     "d\r\ne\n",
		"0003.log":  "f\ng", // leading zeros; a last line without "\n"
		"4.log":     "",
		"7.log":     strings.Repeat("x\n", 150) + "y\n",
		"notes.txt": "not a segment\n",
	}
	want := []string{"a", "b", "", "c", "d", "e", "f", "g", "y"}
	for range 150 {
		want = append(want, "x")
	}
	connectortest.TestSource(t, connectortest.SourceCase[string]{
		New: func(t *testing.T) connector.Source[string] {
			dir := t.TempDir()
			writeSegments(t, dir, segs)
			return SegmentSource(dir, false)
		},
		Want:         want,
		Parallelism:  []int{1, 2, 3, 5},
		BadPositions: []connector.Position{connector.Position("x"), connector.Position("1"), connector.Position("-1:0"), connector.Position("1:-3"), connector.Position("1:999")},
	})
}

// A position of another parallelism is refused with an error that says
// so, rather than read a split that is not the subtask's.
func TestSegmentSourceRefusesAnotherParallelismsPosition(t *testing.T) {
	dir := t.TempDir()
	writeSegments(t, dir, map[string]string{"1.log": "a\n", "2.log": "b\n"})
	_, err := SegmentSource(dir, false).Open(t.Context(), connector.SubtaskInfo{Subtask: 0, Parallelism: 2}, connector.Position("1:0"))
	if err == nil || !strings.Contains(err.Error(), "another parallelism") {
		t.Fatalf("Open at segment 1 as subtask 0 of 2: %v, want an error about another parallelism", err)
	}
}

// readLines reads r until it has n lines; a following reader returns 0,
// nil while it waits, so the loop waits for the lines, not for a time.
func readLines(t *testing.T, r connector.Reader[string], n int) []string {
	t.Helper()
	var got []string
	buf := make([]string, 4)
	for len(got) < n {
		k, err := r.Read(t.Context(), buf[:min(len(buf), n-len(got))])
		if err != nil {
			t.Fatalf("Read after %q: %v", got, err)
		}
		got = append(got, buf[:k]...)
	}
	return got
}

// A following reader yields a line once its "\n" is written, or once the
// writer moved on to the next segment; it never ends.
func TestSegmentSourceFollowsTheLog(t *testing.T) {
	dir := t.TempDir()
	writeSegments(t, dir, map[string]string{"1.log": "a\nhal"})
	r, err := SegmentSource(dir, true).Open(t.Context(), connector.SubtaskInfo{Subtask: 0, Parallelism: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := readLines(t, r, 1); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("got %q, want [a]", got)
	}
	buf := make([]string, 4)
	if n, err := r.Read(t.Context(), buf); n != 0 || err != nil {
		t.Fatalf("Read with a partial line pending = %d %q, %v; want 0, nil", n, buf[:n], err)
	}
	if pos := string(r.Position()); pos != "1:2" {
		t.Fatalf("Position = %q, want 1:2 (the partial line not consumed)", pos)
	}
	f, err := os.OpenFile(filepath.Join(dir, "1.log"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(f, "f\nno newline")
	f.Close()
	if got := readLines(t, r, 1); !slices.Equal(got, []string{"half"}) {
		t.Fatalf("got %q, want [half]", got)
	}
	// The next segment finishes this one, partial last line and all.
	writeSegments(t, dir, map[string]string{"2.log": "b\n"})
	if got := readLines(t, r, 2); !slices.Equal(got, []string{"no newline", "b"}) {
		t.Fatalf("got %q, want [no newline b]", got)
	}
	if n, err := r.Read(t.Context(), buf); n != 0 || err != nil {
		t.Fatalf("Read at the end of the log = %d, %v; want 0, nil (waiting)", n, err)
	}
}

// storeSink remembers the directory of a KVSink for reading it back.
type storeSink struct {
	connector.Sink[Entry]
	dir string
}

func readBack(t *testing.T, dir string) []Entry {
	t.Helper()
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return nil
	}
	m, err := ReadStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []Entry
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, Entry{k, m[k]})
	}
	return out
}

func TestKVSinkConformance(t *testing.T) {
	// A store keeps one value per key, so the records have distinct keys.
	var records []Entry
	for i := range 200 {
		records = append(records, Entry{fmt.Sprintf("key-%d", i), fmt.Sprint(i * i)})
	}
	records = append(records, Entry{"/home", "a/b"}, Entry{"", "empty key"}, Entry{"ü ?%", "\n"},
		Entry{".txn-0-1-x.pending", "a key like a transaction's"}, Entry{"..", "dots"})
	connectortest.TestSink(t, connectortest.SinkCase[Entry]{
		New: func(t *testing.T) connector.Sink[Entry] {
			dir := filepath.Join(t.TempDir(), "store")
			return storeSink{KVSink(dir), dir}
		},
		ReadBack: func(t *testing.T, s connector.Sink[Entry]) []Entry { return readBack(t, s.(storeSink).dir) },
		Records:  records,
	})
}

// The two-phase commit as the engine drives it, with a restart: the
// store shows a checkpoint's entries once it completes, and a restore
// aborts what was written after the restored checkpoint.
func TestKVSinkCommitsWithCheckpoints(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	info := connector.SubtaskInfo{Subtask: 0, Parallelism: 1}
	open := func() *kvWriter {
		w, err := KVSink(dir).Open(ctx, info)
		if err != nil {
			t.Fatal(err)
		}
		return w.(*kvWriter)
	}
	check := func(when string, want ...Entry) {
		t.Helper()
		if got := readBack(t, dir); !slices.Equal(got, want) {
			t.Fatalf("%s: store = %v, want %v", when, got, want)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	w := open()
	must(w.Recover(ctx, 0, nil))
	must(w.Write(ctx, []Entry{{"a", "1"}, {"b", "1"}, {"a", "2"}}))
	must(w.Flush(ctx))
	check("after Flush, before the checkpoint")
	txn1, err := w.PreCommit(ctx, 1)
	must(err)
	check("after PreCommit")
	must(w.Commit(ctx, txn1))
	check("after Commit", Entry{"a", "2"}, Entry{"b", "1"})
	must(w.Commit(ctx, txn1))
	check("after committing again", Entry{"a", "2"}, Entry{"b", "1"})

	must(w.Write(ctx, []Entry{{"a", "3"}}))
	txn2, err := w.PreCommit(ctx, 2)
	must(err)
	must(w.Write(ctx, []Entry{{"c", "1"}}))
	must(w.Close()) // the job fails before checkpoint 2 completes

	// The job restores checkpoint 1: checkpoint 2's transaction is
	// aborted and the entry after it dropped.
	w = open()
	must(w.Recover(ctx, 1, [][]byte{txn1}))
	check("after the restore", Entry{"a", "2"}, Entry{"b", "1"})
	if _, err := os.Stat(filepath.Join(dir, string(txn2))); !os.IsNotExist(err) {
		t.Fatalf("checkpoint 2's transaction file is still there after the restore of checkpoint 1: %v", err)
	}
	if err := w.Commit(ctx, []byte("../outside")); err == nil {
		t.Fatal("Commit of a name that is no transaction succeeded")
	}
	must(w.Close())
}
