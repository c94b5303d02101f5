package file

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weir-stream/weir/connector"
)

func visibleLines(t *testing.T, dir string) []string {
	t.Helper()
	parts, err := Parts(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range parts {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Fields(string(data))...)
	}
	return out
}

// The file sink's two-phase commit: only committed transactions are
// visible, a commit repeated after a restore is harmless, and a restore
// drops what was written after the restored checkpoint.
func TestJSONSinkCommitsWithCheckpoints(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sink := JSONSink[int](dir)
	open := func(attempt int) connector.Committer {
		w, err := sink.Open(ctx, connector.SubtaskInfo{Subtask: 0, Parallelism: 1, Attempt: attempt})
		if err != nil {
			t.Fatal(err)
		}
		return w.(connector.Committer)
	}
	w := open(0)
	if err := w.Recover(ctx, 0, nil); err != nil {
		t.Fatal(err)
	}
	ww := w.(connector.Writer[int])
	ww.Write(ctx, []int{1, 2})
	t1, err := w.PreCommit(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	ww.Write(ctx, []int{3})
	t2, err := w.PreCommit(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	ww.Write(ctx, []int{4}) // after the last barrier: never visible
	if got := visibleLines(t, dir); len(got) != 0 {
		t.Fatalf("visible before any commit: %v", got)
	}
	if err := w.Commit(ctx, t1); err != nil {
		t.Fatal(err)
	}
	if got := visibleLines(t, dir); !slices.Equal(got, []string{"1", "2"}) {
		t.Fatalf("after commit 1: %v", got)
	}
	_ = t2
	// The job fails; attempt 1 restores checkpoint 1, whose transaction
	// is committed again; checkpoint 2's is aborted.
	ww.Close()
	w = open(1)
	if err := w.Recover(ctx, 1, [][]byte{t1}); err != nil {
		t.Fatal(err)
	}
	ww = w.(connector.Writer[int])
	ww.Write(ctx, []int{3, 4})
	t3, err := w.PreCommit(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx, t3); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx, t3); err != nil {
		t.Fatalf("second commit: %v", err)
	}
	ww.Close()
	if got := visibleLines(t, dir); !slices.Equal(got, []string{"1", "2", "3", "4"}) {
		t.Fatalf("final output %v, want [1 2 3 4]", got)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".part-*"))
	if len(left) != 0 {
		t.Fatalf("transaction files left: %v", left)
	}
	// Output removed under the job is not a passing fault: the error is a
	// configuration error, which the engine does not retry.
	if err := w.Commit(ctx, []byte(".part-0-9.jsonl.pending")); err == nil || !strings.Contains(err.Error(), "lost") || !errors.Is(err, connector.ErrConfig) {
		t.Fatalf("committing a missing transaction: %v, want a connector.ErrConfig naming it lost", err)
	}
	// Checkpoint 3 turns out unusable and checkpoint 1 is restored: the
	// output committed by checkpoint 3 is withdrawn, as it will be
	// produced again.
	w = open(2)
	if err := w.Recover(ctx, 1, [][]byte{t1}); err != nil {
		t.Fatal(err)
	}
	w.(connector.Writer[int]).Close()
	if got := visibleLines(t, dir); !slices.Equal(got, []string{"1", "2"}) {
		t.Fatalf("after restoring checkpoint 1: %v, want [1 2]", got)
	}
}

// Two writers of the same subtask and attempt number — a worker of a
// deposed coordinator, cut off from it, running on beside a worker of
// its successor, whose attempts are numbered anew — interleave writes,
// pre-commits of the same checkpoint and a close: neither writes into,
// renames or deletes a file of the other, and the successor's committed
// output holds exactly its own records.
func TestJSONSinkWritersOfTwoRunsNeverTouchEachOthersFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func() (connector.Writer[int], connector.Committer) {
		w, err := JSONSink[int](dir).Open(ctx, connector.SubtaskInfo{Subtask: 0, Parallelism: 1, Attempt: 1})
		if err != nil {
			t.Fatal(err)
		}
		c := w.(connector.Committer)
		if err := c.Recover(ctx, 4, nil); err != nil {
			t.Fatal(err)
		}
		return w, c
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	preCommit := func(c connector.Committer, checkpoint int64) []byte {
		t.Helper()
		txn, err := c.PreCommit(ctx, checkpoint)
		if err != nil {
			t.Fatalf("pre-commit of checkpoint %d: %v", checkpoint, err)
		}
		return txn
	}
	old, oldTxn := open()
	cur, curTxn := open() // the newer run's restore may clear the older writer's files
	must(cur.Write(ctx, []int{10}))
	must(old.Write(ctx, []int{1}))
	oldT5 := preCommit(oldTxn, 5)
	curT5 := preCommit(curTxn, 5)
	if string(oldT5) == string(curT5) {
		t.Fatalf("both writers pre-committed checkpoint 5 as %s", curT5)
	}
	must(cur.Write(ctx, []int{11}))
	must(old.Write(ctx, []int{2}))
	must(old.Close()) // drops its open transaction
	curT6 := preCommit(curTxn, 6)
	must(curTxn.Commit(ctx, curT5))
	must(curTxn.Commit(ctx, curT6))
	must(cur.Close())
	if got := visibleLines(t, dir); !slices.Equal(got, []string{"10", "11"}) {
		t.Fatalf("committed output %v, want the newer writer's [10 11]", got)
	}
	// The older writer's transaction stays pending, never committed: the
	// next restore of the subtask deletes it.
	if b, err := os.ReadFile(filepath.Join(dir, string(oldT5))); err != nil || string(b) != "1\n" {
		t.Fatalf("the older writer's pending file %s: %q, %v", oldT5, b, err)
	}
	w, err := JSONSink[int](dir).Open(ctx, connector.SubtaskInfo{Subtask: 0, Parallelism: 1, Attempt: 2})
	must(err)
	must(w.(connector.Committer).Recover(ctx, 6, [][]byte{curT5, curT6}))
	must(w.Close())
	if left, _ := filepath.Glob(filepath.Join(dir, ".part-*")); len(left) != 0 {
		t.Fatalf("files left after a restore: %v", left)
	}
	if got := visibleLines(t, dir); !slices.Equal(got, []string{"10", "11"}) {
		t.Fatalf("output after a restore %v, want [10 11]", got)
	}
}

// A checkpoint taken by an older weir names its pending files without a
// writer id; a restore still commits them under their final names.
func TestJSONSinkCommitsPendingFilesNamedWithoutAWriterID(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".part-0-7.jsonl.pending"), []byte("7\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	w, err := JSONSink[int](dir).Open(ctx, connector.SubtaskInfo{Subtask: 0, Parallelism: 1, Attempt: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := w.(connector.Committer)
	if err := c.Recover(ctx, 7, [][]byte{[]byte(".part-0-7.jsonl.pending")}); err != nil {
		t.Fatal(err)
	}
	if got := visibleLines(t, dir); !slices.Equal(got, []string{"7"}) {
		t.Fatalf("output %v, want [7]", got)
	}
	for _, bad := range []string{".part-0-7.jsonl", "part-0-7.jsonl.pending", ".part-0.jsonl.pending", ".part-0-7.jsonl.a.b.pending"} {
		if err := c.Commit(ctx, []byte(bad)); err == nil || !strings.Contains(err.Error(), "is not a pending part file") {
			t.Errorf("committing %q: %v, want it refused as not a pending part file", bad, err)
		}
	}
	w.Close()
}

// Restored at a lower parallelism, a subtask commits the transactions it
// is handed from old subtasks no longer there and drops what those wrote
// after the restored checkpoint, as it does for its own.
func TestJSONSinkRestoredAtALowerParallelismCleansUpAfterTheOldSubtasks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sink := JSONSink[int](dir)
	open := func(subtask, n, attempt int) (connector.Writer[int], connector.Committer) {
		w, err := sink.Open(ctx, connector.SubtaskInfo{Subtask: subtask, Parallelism: n, Attempt: attempt})
		if err != nil {
			t.Fatal(err)
		}
		return w, w.(connector.Committer)
	}
	// Two subtasks pre-commit checkpoint 1, then write on past it.
	var txns [][]byte
	for s := range 2 {
		w, c := open(s, 2, 0)
		if err := c.Recover(ctx, 0, nil); err != nil {
			t.Fatal(err)
		}
		w.Write(ctx, []int{10 * (s + 1)})
		txn, err := c.PreCommit(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		txns = append(txns, txn)
		w.Write(ctx, []int{99})
		if _, err := c.PreCommit(ctx, 2); err != nil {
			t.Fatal(err)
		}
		w.Write(ctx, []int{98})
	}
	// Restored from checkpoint 1 at parallelism 1: subtask 0 is handed
	// both old subtasks' transactions.
	_, c := open(0, 1, 1)
	if err := c.Recover(ctx, 1, txns); err != nil {
		t.Fatal(err)
	}
	got := visibleLines(t, dir)
	slices.Sort(got)
	if want := []string{"10", "20"}; !slices.Equal(got, want) {
		t.Fatalf("visible lines %v, want %v", got, want)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".part-1-") {
			t.Errorf("old subtask 1's file %s is left behind", e.Name())
		}
	}
}

// Parts lists the part files by checkpoint, then subtask: a key whose
// rows subtask 1 wrote until checkpoint 2 and subtask 0 from checkpoint 3
// on (a restore at another parallelism moved it) reads in write order.
func TestPartsAreInCheckpointOrderAcrossSubtasks(t *testing.T) {
	dir := t.TempDir()
	names := []string{"part-0-3.jsonl", "part-1-2.jsonl", "part-0-1.jsonl", "part-1-1.jsonl", "part-2-3.jsonl"}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	parts, err := Parts(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range parts {
		got = append(got, filepath.Base(p))
	}
	want := []string{"part-0-1.jsonl", "part-1-1.jsonl", "part-1-2.jsonl", "part-0-3.jsonl", "part-2-3.jsonl"}
	if !slices.Equal(got, want) {
		t.Fatalf("Parts = %v, want %v", got, want)
	}
}
