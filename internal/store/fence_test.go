package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/store"
)

func lead(t *testing.T, blobs blob.Store, holder string) *store.Leadership {
	t.Helper()
	l, err := store.Lead(t.Context(), blobs, holder)
	if err != nil {
		t.Fatalf("Lead(%s): %v", holder, err)
	}
	return l
}

// superseded checks that err says epoch was superseded by epoch by.
func superseded(t *testing.T, err error, epoch, by uint64) {
	t.Helper()
	var s *store.SupersededError
	if !errors.As(err, &s) || !errors.Is(err, store.ErrFenced) {
		t.Fatalf("error %v, want a *SupersededError wrapping ErrFenced", err)
	}
	if s.Epoch != epoch || s.By != by {
		t.Fatalf("superseded error says epoch %d by %d, want %d by %d (%v)", s.Epoch, s.By, epoch, by, err)
	}
}

func TestEachLeaderClaimsANewerEpochAndFencesTheOlder(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		a := lead(t, blobs, "coordinator a")
		if err := a.Check(t.Context()); err != nil {
			t.Fatalf("the only leader's check: %v", err)
		}
		b := lead(t, blobs, "coordinator b")
		if a.Epoch() != 1 || b.Epoch() != 2 {
			t.Fatalf("epochs %d and %d, want 1 and 2", a.Epoch(), b.Epoch())
		}
		err := a.Check(t.Context())
		superseded(t, err, 1, 2)
		if got, want := err.Error(), "leadership epoch 1 superseded by epoch 2 (coordinator b)"; got != want {
			t.Fatalf("error %q, want %q", got, want)
		}
		if err := b.Check(t.Context()); err != nil {
			t.Fatalf("the newest leader's check: %v", err)
		}
		c := lead(t, blobs, "coordinator c")
		superseded(t, b.Check(t.Context()), 2, 3)
		superseded(t, a.Check(t.Context()), 1, 3)
		if c.Epoch() != 3 {
			t.Fatalf("third epoch %d, want 3", c.Epoch())
		}
	})
}

func TestOnlyTheRecentClaimsAreKept(t *testing.T) {
	blobs := blob.Memory()
	var last *store.Leadership
	for range 20 {
		last = lead(t, blobs, "leader")
	}
	ks := keys(t, blobs, "cluster/leader/")
	if len(ks) != 16 || ks[0] != "cluster/leader/epoch-00000000000000000005" || ks[15] != "cluster/leader/epoch-00000000000000000020" {
		t.Fatalf("claims kept after 20 leaders:\n%s", strings.Join(ks, "\n"))
	}
	if err := last.Check(t.Context()); err != nil {
		t.Fatalf("the newest leader's check: %v", err)
	}
}

func TestLeadersClaimingAtOnceGetDistinctEpochs(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		const n = 8
		leaders := make([]*store.Leadership, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				leaders[i], errs[i] = store.Lead(context.Background(), blobs, "racer")
			}()
		}
		wg.Wait()
		seen := map[uint64]bool{}
		valid := 0
		for i, l := range leaders {
			if errs[i] != nil {
				t.Fatalf("Lead: %v", errs[i])
			}
			if seen[l.Epoch()] {
				t.Fatalf("epoch %d claimed twice", l.Epoch())
			}
			seen[l.Epoch()] = true
			if err := l.Check(t.Context()); err == nil {
				valid++
				if l.Epoch() != n {
					t.Fatalf("epoch %d passes its check, but %d were claimed", l.Epoch(), n)
				}
			} else if !errors.Is(err, store.ErrFenced) {
				t.Fatalf("Check: %v", err)
			}
		}
		if valid != 1 {
			t.Fatalf("%d leaders pass their check, want exactly one", valid)
		}
	})
}

func TestASupersededLeaderCommitsAndDeletesNothing(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		plain := store.New(blobs)
		old := plain.Fenced(lead(t, blobs, "old"))
		checkpoint(t, old, "wc", 1) // commits while it leads
		writeState(t, plain, "wc", 2)
		m3 := writeState(t, plain, "wc", 3)
		next := plain.Fenced(lead(t, blobs, "new"))
		before := keys(t, blobs, "jobs/")

		err := old.Commit(t.Context(), m3)
		superseded(t, err, 1, 2)
		if _, err := old.DeleteUncommitted(t.Context(), "wc", 3); !errors.Is(err, store.ErrFenced) {
			t.Fatalf("DeleteUncommitted of the old leader: %v, want ErrFenced", err)
		}
		checkpoint(t, next, "wc", 4)
		if _, err := old.Retain(t.Context(), "wc", 1); !errors.Is(err, store.ErrFenced) {
			t.Fatalf("Retain of the old leader: %v, want ErrFenced", err)
		}
		after := keys(t, blobs, "jobs/")
		for _, k := range before {
			if !slices.Contains(after, k) {
				t.Fatalf("the old leader deleted %s", k)
			}
		}
		wantCommitted(t, plain, "wc", 1, 4) // the old leader's commit of 3 wrote nothing
		// The new leader commits 3 itself.
		if err := next.Commit(t.Context(), m3); err != nil {
			t.Fatalf("the new leader's commit: %v", err)
		}
	})
}

// hookFence is a leader's fence that runs then once, after its first
// check passed: a successor claims the store between the check before a
// commit's write and the check after it.
type hookFence struct {
	l    *store.Leadership
	once sync.Once
	then func()
}

func (h *hookFence) Check(ctx context.Context) error {
	err := h.l.Check(ctx)
	h.once.Do(h.then)
	return err
}

func TestACommitSupersededDuringItsWriteSaysTheSinksMustNotCommit(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		plain := store.New(blobs)
		f := &hookFence{l: lead(t, blobs, "old"), then: func() { lead(t, blobs, "new") }}
		m := writeState(t, plain, "wc", 5)
		err := plain.Fenced(f).Commit(t.Context(), m)
		superseded(t, err, 1, 2)
		// The metadata is written, as the successor may already have seen
		// it; the error tells the caller not to order its commit.
		if _, err := plain.Load(t.Context(), "wc", 5); err != nil {
			t.Fatalf("Load after a commit superseded midway: %v", err)
		}
	})
}

func TestALeaderThatCannotCheckWritesNothing(t *testing.T) {
	mem := blob.Memory()
	faulty := blob.Faulty(mem, blob.Plan{{Op: blob.OpList, Prefix: "cluster/leader/", Nth: 2, Action: blob.Fail(nil)}})
	l := lead(t, faulty, "leader") // the first listing
	c := store.New(mem).Fenced(l)
	m := writeState(t, store.New(mem), "wc", 1)
	err := c.Commit(t.Context(), m)
	if err == nil || errors.Is(err, store.ErrFenced) || !errors.Is(err, blob.ErrInjected) {
		t.Fatalf("Commit with an unreadable fence: %v, want the store's error", err)
	}
	wantCommitted(t, c, "wc") // nothing, although the fence could not be checked
	if err := c.Commit(t.Context(), m); err != nil {
		t.Fatalf("Commit once the store answers: %v", err)
	}
}

func TestALeaderWhoseClaimIsGoneIsFenced(t *testing.T) {
	blobs := blob.Memory()
	l := lead(t, blobs, "leader")
	if err := blobs.Delete(t.Context(), "cluster/leader/epoch-00000000000000000001"); err != nil {
		t.Fatal(err)
	}
	superseded(t, l.Check(t.Context()), 1, 0)
}

func keys(t *testing.T, blobs blob.Store, prefix string) []string {
	t.Helper()
	ks, err := blobs.List(t.Context(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}
