package objstore_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/objstore"
)

type committer interface {
	connector.Writer[int]
	connector.Committer
}

func openWriter(t *testing.T, sink connector.Sink[int], subtask, parallelism int) committer {
	t.Helper()
	w, err := sink.Open(context.Background(), connector.SubtaskInfo{Subtask: subtask, Parallelism: parallelism})
	if err != nil {
		t.Fatal(err)
	}
	return w.(committer)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Only committed transactions are visible, a commit repeated after a
// restore is harmless, and a restore aborts the uploads begun after the
// restored checkpoint.
func TestSinkCommitsWithCheckpointsAndARestoreAbortsTheRest(t *testing.T) {
	ctx := context.Background()
	loc := s3Server(t).location()
	sink := objstore.NewSink(objstore.SinkConfig[int]{Location: loc, Format: objstore.JSONLines[int]()})
	w := openWriter(t, sink, 0, 1)
	must(t, w.Recover(ctx, 0, nil))
	must(t, w.Write(ctx, []int{1, 2}))
	t1, err := w.PreCommit(ctx, 1)
	must(t, err)
	must(t, w.Write(ctx, []int{3}))
	t2, err := w.PreCommit(ctx, 2)
	must(t, err)
	if got := readLines(t, loc); len(got) != 0 {
		t.Fatalf("visible before any commit: %v", got)
	}
	must(t, w.Commit(ctx, t1))
	if got := readLines(t, loc); !slices.Equal(got, []string{"1", "2"}) {
		t.Fatalf("after commit 1: %v", got)
	}
	must(t, w.Write(ctx, []int{4})) // after the last barrier: never visible
	_ = t2
	// The process dies without closing the writer: checkpoint 2's upload
	// stays in progress. A restore of checkpoint 1 commits its
	// transaction again and aborts checkpoint 2's.
	w = openWriter(t, sink, 0, 1)
	must(t, w.Recover(ctx, 1, [][]byte{t1}))
	noPendingUploads(t, loc)
	must(t, w.Write(ctx, []int{3, 4}))
	t2, err = w.PreCommit(ctx, 2)
	must(t, err)
	must(t, w.Commit(ctx, t2))
	must(t, w.Commit(ctx, t2)) // again: harmless
	must(t, w.Close())
	if got := readLines(t, loc); !slices.Equal(got, []string{"1", "2", "3", "4"}) {
		t.Fatalf("after the restore: %v", got)
	}
	noPendingUploads(t, loc)
}

// Restoring an older checkpoint (a newer one unusable) withdraws the part
// files committed after it.
func TestSinkRestoringAnOlderCheckpointWithdrawsLaterParts(t *testing.T) {
	ctx := context.Background()
	loc := s3Server(t).location()
	sink := objstore.NewSink(objstore.SinkConfig[int]{Location: loc, Format: objstore.JSONLines[int]()})
	w := openWriter(t, sink, 0, 1)
	must(t, w.Recover(ctx, 0, nil))
	var txns [][]byte
	for ck := int64(1); ck <= 3; ck++ {
		must(t, w.Write(ctx, []int{int(ck)}))
		txn, err := w.PreCommit(ctx, ck)
		must(t, err)
		must(t, w.Commit(ctx, txn))
		txns = append(txns, txn)
	}
	w = openWriter(t, sink, 0, 1)
	must(t, w.Recover(ctx, 1, txns[:1]))
	if got := readLines(t, loc); !slices.Equal(got, []string{"1"}) {
		t.Fatalf("after restoring checkpoint 1: %v", got)
	}
}

// Restored at a lower parallelism, a subtask aborts the uploads of the
// old subtasks it took over, and leaves those of the others alone.
func TestSinkRestoredAtALowerParallelismAbortsTheOldSubtasksUploads(t *testing.T) {
	ctx := context.Background()
	loc := s3Server(t).location()
	sink := objstore.NewSink(objstore.SinkConfig[int]{Location: loc, Format: objstore.JSONLines[int]()})
	for sub := 0; sub < 3; sub++ {
		w := openWriter(t, sink, sub, 3)
		must(t, w.Recover(ctx, 0, nil))
		must(t, w.Write(ctx, []int{sub}))
		_, err := w.PreCommit(ctx, 1) // never committed
		must(t, err)
	}
	w := openWriter(t, sink, 0, 2)
	must(t, w.Recover(ctx, 0, nil)) // takes over old subtask 2
	pending, err := objstore.PendingUploads(ctx, loc)
	must(t, err)
	if len(pending) != 1 || !strings.Contains(pending[0], "/part-1-") {
		t.Fatalf("uploads left: %v, want only old subtask 1's", pending)
	}
	must(t, openWriter(t, sink, 1, 2).Recover(ctx, 0, nil))
	noPendingUploads(t, loc)
}

// A file bigger than a part is uploaded in parts of PartSize and a
// smaller last one, and reads back whole.
func TestSinkUploadsBigFilesInParts(t *testing.T) {
	ctx := context.Background()
	loc := s3Server(t).location()
	sink := objstore.NewSink(objstore.SinkConfig[string]{Location: loc, Format: objstore.JSONLines[string]()})
	w, err := sink.Open(ctx, connector.SubtaskInfo{Subtask: 0, Parallelism: 1})
	must(t, err)
	c := w.(connector.Committer)
	must(t, c.Recover(ctx, 0, nil))
	line := strings.Repeat("x", 1000)
	var want []string
	for i := 0; i < 12<<10; i++ { // about 12 MiB: parts of 5, 5 and 2 MiB
		want = append(want, `"`+line+`"`)
		must(t, w.Write(ctx, []string{line}))
	}
	txn, err := c.PreCommit(ctx, 1)
	must(t, err)
	if n := strings.Count(string(txn), `"n":`); n != 3 {
		t.Fatalf("%d parts, want 3: %s", n, txn)
	}
	must(t, c.Commit(ctx, txn))
	must(t, w.Close())
	if got := readLines(t, loc); !slices.Equal(got, want) {
		t.Fatalf("read back %d lines, want %d equal ones", len(got), len(want))
	}
}
