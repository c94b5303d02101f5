package store_test

import (
	"errors"
	"testing"

	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/store"
)

func TestTheLatestRunIsTheLastStarted(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		c := store.New(blobs)
		if _, ok, err := c.LastRun(t.Context(), "wc"); ok || err != nil {
			t.Fatalf("LastRun of a job that never ran = %v, %v; want none", ok, err)
		}
		for _, run := range []string{"first", "second"} {
			if err := c.StartRun(t.Context(), "wc", store.RunRecord{Run: run, StartedMillis: 1_700_000_000_000}); err != nil {
				t.Fatal(err)
			}
		}
		got, ok, err := c.LastRun(t.Context(), "wc")
		if err != nil || !ok || got.Run != "second" {
			t.Fatalf("LastRun = %+v, %v, %v; want the second run", got, ok, err)
		}
		// The record is no checkpoint: listings of checkpoints ignore it.
		wantCommitted(t, c, "wc")
		if _, ok, _ := c.LastRun(t.Context(), "other"); ok {
			t.Fatal("another job sees the run")
		}
	})
}

func TestAGarbledRunRecordIsCorrupt(t *testing.T) {
	blobs := blob.Memory()
	if err := blobs.Put(t.Context(), "jobs/wc/_run", []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	_, _, err := store.New(blobs).LastRun(t.Context(), "wc")
	wantErr(t, err, store.ErrCorrupt, "jobs/wc/_run")
}

func TestACheckpointRecordsItsRun(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		c := store.New(blobs)
		m := writeState(t, c, "wc", 3)
		m.Run, m.Final = "r1", true
		if err := c.Commit(t.Context(), m); err != nil {
			t.Fatal(err)
		}
		got, err := c.Load(t.Context(), "wc", 3)
		if err != nil || got.Run != "r1" || !got.Final {
			t.Fatalf("Load = run %q final %v, %v; want r1, final", got.Run, got.Final, err)
		}
	})
}

// A checkpoint a restore found corrupt is passed over from then on, and
// retention keeps an older usable one in its place, though an earlier
// retention had found it usable.
func TestACheckpointMarkedUnusableIsPassedOverAndRetentionKeepsTheFallback(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		c := store.New(blobs)
		for id := uint64(1); id <= 3; id++ {
			checkpoint(t, c, "wc", id)
		}
		// Retention verifies all three first (and remembers them).
		if deleted, err := c.Retain(t.Context(), "wc", 3); err != nil || len(deleted) != 0 {
			t.Fatalf("Retain(3) = %v, %v; want nothing deleted", deleted, err)
		}
		why := errors.New("state blob 1-0: checksum mismatch")
		if err := c.MarkUnusable(t.Context(), "wc", 3, why); err != nil {
			t.Fatal(err)
		}
		m, skipped, err := c.Latest(t.Context(), "wc")
		if err != nil || m.ID != 2 || len(skipped) != 1 || skipped[0].ID != 3 {
			t.Fatalf("Latest = %d, %v, %v; want 2, skipping 3", m.ID, skipped, err)
		}
		wantErr(t, skipped[0].Err, store.ErrCorrupt, "a restore found its state corrupt", "checksum mismatch")
		if m, _, err := c.LatestBefore(t.Context(), "wc", 2); err != nil || m.ID != 1 {
			t.Fatalf("LatestBefore(2) = %d, %v; want 1", m.ID, err)
		}
		if _, err := c.Retain(t.Context(), "wc", 1); err != nil {
			t.Fatal(err)
		}
		wantCommitted(t, c, "wc", 2, 3)
	})
}
