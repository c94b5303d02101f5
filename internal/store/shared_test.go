package store_test

import (
	"slices"
	"testing"

	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/store"
)

// commitShared commits checkpoint id of job whose first task's state
// names the shared files names, putting them first.
func commitShared(t *testing.T, c *store.Checkpoints, job string, id uint64, names ...string) store.Metadata {
	t.Helper()
	for _, n := range names {
		if err := c.Shared(job).Put(t.Context(), n, []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
	m := writeState(t, c, job, id)
	m.Tasks[0].Handles[0].Shared = names
	if err := c.Commit(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	return m
}

func sharedNames(t *testing.T, blobs blob.Store, job string) []string {
	t.Helper()
	keys, err := blobs.List(t.Context(), "jobs/"+job+"/shared/")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range keys {
		out = append(out, k[len("jobs/"+job+"/shared/"):])
	}
	return out
}

// Retention deletes a shared file with the last retained checkpoint that
// names it, and not before.
func TestRetentionDeletesASharedFileWithTheLastCheckpointThatNamesIt(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		c := store.New(blobs)
		commitShared(t, c, "j", 1, "a", "b")
		commitShared(t, c, "j", 2, "b", "c")
		commitShared(t, c, "j", 3, "c", "d")
		if _, err := c.Retain(t.Context(), "j", 2); err != nil {
			t.Fatal(err)
		}
		if got, want := sharedNames(t, blobs, "j"), []string{"b", "c", "d"}; !slices.Equal(got, want) {
			t.Fatalf("after keeping checkpoints 2 and 3: shared files %v, want %v", got, want)
		}
		if _, err := c.Retain(t.Context(), "j", 1); err != nil {
			t.Fatal(err)
		}
		if got, want := sharedNames(t, blobs, "j"), []string{"c", "d"}; !slices.Equal(got, want) {
			t.Fatalf("after keeping checkpoint 3: shared files %v, want %v", got, want)
		}
	})
}

// Before a run, the shared files no checkpoint names (uploaded for
// checkpoints that never completed) go; those of the checkpoint the run
// restores stay, also when it is another job's, whose files are copied in.
func TestUnnamedSharedFilesGoBeforeARun(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		c := store.New(blobs)
		commitShared(t, c, "j", 1, "a")
		for _, n := range []string{"orphan1", "orphan2"} {
			if err := c.Shared("j").Put(t.Context(), n, []byte(n)); err != nil {
				t.Fatal(err)
			}
		}
		other := commitShared(t, c, "other", 7, "x")
		if err := c.CopyShared(t.Context(), &other, "j"); err != nil {
			t.Fatal(err)
		}
		deleted, err := c.DeleteUnnamedShared(t.Context(), "j", &other)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"orphan1", "orphan2"}; !slices.Equal(deleted, want) {
			t.Fatalf("deleted %v, want %v", deleted, want)
		}
		if got, want := sharedNames(t, blobs, "j"), []string{"a", "x"}; !slices.Equal(got, want) {
			t.Fatalf("shared files left %v, want %v", got, want)
		}
	})
}
