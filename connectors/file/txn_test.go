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
