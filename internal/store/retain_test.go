package store_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/store"
)

func wantDeleted(t *testing.T, got []uint64, err error, want ...uint64) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("deleted %v, want %v", got, want)
	}
}

func TestRetainKeepsExactlyTheNewestN(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		c := store.New(blobs)
		for id := uint64(1); id <= 6; id++ {
			checkpoint(t, c, "wc", id)
		}
		deleted, err := c.Retain(t.Context(), "wc", 3)
		wantDeleted(t, deleted, err, 1, 2, 3)
		wantCommitted(t, c, "wc", 4, 5, 6)
		for _, gone := range []string{"jobs/wc/chk-000000000001/", "jobs/wc/chk-000000000002/", "jobs/wc/chk-000000000003/"} {
			wantKeys(t, blobs, gone)
		}

		deleted, err = c.Retain(t.Context(), "wc", 3)
		wantDeleted(t, deleted, err)
		deleted, err = c.Retain(t.Context(), "wc", 1)
		wantDeleted(t, deleted, err, 4, 5)
		wantKeys(t, blobs, "",
			"jobs/wc/chk-000000000006/_metadata",
			"jobs/wc/chk-000000000006/state/0-0",
			"jobs/wc/chk-000000000006/state/0-1",
			"jobs/wc/chk-000000000006/state/1-0")
	})
}

func TestRetainRefusesToKeepNothing(t *testing.T) {
	c := store.New(blob.Memory())
	checkpoint(t, c, "wc", 1)
	if _, err := c.Retain(t.Context(), "wc", 0); err == nil {
		t.Fatal("Retain(0) succeeded")
	}
	wantCommitted(t, c, "wc", 1)
}

func TestRetainCountsOnlyUsableCheckpoints(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		// Checkpoints 4 and 5 are committed with corrupt metadata.
		faulty := blob.Faulty(blobs, blob.Plan{
			{Op: blob.OpPutIfAbsent, Prefix: "jobs/wc/chk-000000000004/", Action: blob.Corrupt(20)},
			{Op: blob.OpPutIfAbsent, Prefix: "jobs/wc/chk-000000000005/", Action: blob.Truncate(8)},
		})
		c := store.New(faulty)
		for id := uint64(1); id <= 5; id++ {
			checkpoint(t, c, "wc", id)
		}
		deleted, err := c.Retain(t.Context(), "wc", 4)
		wantDeleted(t, deleted, err) // only three usable: keep all
		deleted, err = c.Retain(t.Context(), "wc", 2)
		wantDeleted(t, deleted, err, 1)
		wantCommitted(t, c, "wc", 2, 3, 4, 5)
		m, _, err := c.Latest(t.Context(), "wc")
		if err != nil || m.ID != 3 {
			t.Fatalf("Latest = %d, %v; want 3", m.ID, err)
		}
	})
}

func TestRetainStopsOnATransientError(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		down := errors.New("timeout")
		faulty := blob.Faulty(blobs, blob.Plan{{Op: blob.OpStat, Nth: 1, Action: blob.Fail(down)}})
		c := store.New(faulty)
		for id := uint64(1); id <= 3; id++ {
			checkpoint(t, c, "wc", id)
		}
		if _, err := c.Retain(t.Context(), "wc", 1); !errors.Is(err, down) {
			t.Fatalf("Retain = %v, want the store's error", err)
		}
		wantCommitted(t, c, "wc", 1, 2, 3)
	})
}

func TestAnInterruptedRetainLeavesNoHalfDeletedCommittedCheckpoint(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		// The crash: deleting checkpoint 1's second state blob fails.
		faulty := blob.Faulty(blobs, blob.Plan{
			{Op: blob.OpDelete, Prefix: "jobs/wc/chk-000000000001/state/", Nth: 2, Action: blob.Fail(nil)},
		})
		c := store.New(faulty)
		for id := uint64(1); id <= 3; id++ {
			checkpoint(t, c, "wc", id)
		}
		if _, err := c.Retain(t.Context(), "wc", 2); !errors.Is(err, blob.ErrInjected) {
			t.Fatalf("Retain = %v, want the injected failure", err)
		}
		wantCommitted(t, c, "wc", 2, 3) // metadata went first
		wantKeys(t, blobs, "jobs/wc/chk-000000000001/", "jobs/wc/chk-000000000001/state/0-1")

		deleted, err := c.DeleteUncommitted(t.Context(), "wc", 3)
		wantDeleted(t, deleted, err, 1)
		wantKeys(t, blobs, "jobs/wc/chk-000000000001/")
	})
}

func TestDeleteUncommittedSparesCommittedAndInFlightCheckpoints(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		c := store.New(blobs)
		checkpoint(t, c, "wc", 1)
		writeState(t, c, "wc", 2) // aborted
		checkpoint(t, c, "wc", 3)
		writeState(t, c, "wc", 4) // in flight
		// Someone else's files under the job are not the store's to delete.
		for _, k := range []string{"jobs/wc/chk-notanid/x", "jobs/wc/chk-2x"} {
			if err := blobs.Put(t.Context(), k, []byte("foreign")); err != nil {
				t.Fatal(err)
			}
		}

		deleted, err := c.DeleteUncommitted(t.Context(), "wc", 3)
		wantDeleted(t, deleted, err, 2)
		wantKeys(t, blobs, "jobs/wc/chk-000000000002/")
		wantKeys(t, blobs, "jobs/wc/chk-000000000004/",
			"jobs/wc/chk-000000000004/state/0-0",
			"jobs/wc/chk-000000000004/state/0-1",
			"jobs/wc/chk-000000000004/state/1-0")
		wantKeys(t, blobs, "jobs/wc/chk-n", "jobs/wc/chk-notanid/x")
		wantKeys(t, blobs, "jobs/wc/chk-2", "jobs/wc/chk-2x")
		wantCommitted(t, c, "wc", 1, 3)
		for _, id := range []uint64{1, 3} {
			if _, err := c.Load(t.Context(), "wc", id); err != nil {
				t.Errorf("Load(%d) after cleanup: %v", id, err)
			}
		}

		deleted, err = c.DeleteUncommitted(t.Context(), "wc", 4)
		wantDeleted(t, deleted, err, 4)
	})
}
