package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/store"
)

func TestALeaseExpiresOnlyAfterAWholePeriodWithoutChange(t *testing.T) {
	w := store.LeaseWatch{Period: 3 * time.Second}
	t0 := time.Unix(1000, 0)
	steps := []struct {
		raw  string
		at   time.Duration
		want bool
	}{
		{`{"epoch":1,"renewals":1}`, 0, false},
		{`{"epoch":1,"renewals":1}`, 2 * time.Second, false},
		{`{"epoch":1,"renewals":2}`, 2500 * time.Millisecond, false}, // renewed: the period starts again
		{`{"epoch":1,"renewals":2}`, 5 * time.Second, false},
		{`{"epoch":1,"renewals":2}`, 5500 * time.Millisecond, true},
	}
	for i, s := range steps {
		if got := w.Observe([]byte(s.raw), t0.Add(s.at)); got != s.want {
			t.Fatalf("step %d (%s at %v): expired %v, want %v", i, s.raw, s.at, got, s.want)
		}
	}
}

func TestAReleasedLeaseExpiresAtOnceAndAMissingOneAfterAPeriod(t *testing.T) {
	w := store.LeaseWatch{Period: time.Second}
	t0 := time.Unix(1000, 0)
	if w.Observe(nil, t0) {
		t.Fatal("a missing lease expired before a period passed")
	}
	if !w.Observe(nil, t0.Add(time.Second)) {
		t.Fatal("a lease missing for a whole period did not expire")
	}
	w = store.LeaseWatch{Period: time.Hour}
	if !w.Observe([]byte(`{"epoch":3,"released":true}`), t0) {
		t.Fatal("a released lease did not expire at once")
	}
	w = store.LeaseWatch{Period: time.Second, Self: "a:1"}
	if w.Observe([]byte(`{"epoch":3,"addr":"a:1","released":true}`), t0) {
		t.Fatal("the lease a standby released itself expired at once for it")
	}
	if !w.Observe([]byte(`{"epoch":3,"addr":"a:1","released":true}`), t0.Add(time.Second)) {
		t.Fatal("the lease a standby released itself did not expire after a period")
	}
}

func TestASupersededLeaderRenewsNoLease(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		a := lead(t, blobs, "a")
		if err := a.Renew(t.Context(), store.LeaseRecord{Addr: "a:1", Renewals: 1}); err != nil {
			t.Fatalf("renewing the leader's lease: %v", err)
		}
		rec, ok, err := store.ReadLease(t.Context(), blobs)
		if err != nil || !ok || rec.Epoch != a.Epoch() || rec.Addr != "a:1" {
			t.Fatalf("lease %+v %v %v, want epoch %d at a:1", rec, ok, err, a.Epoch())
		}
		b := lead(t, blobs, "b")
		superseded(t, a.Renew(t.Context(), store.LeaseRecord{Addr: "a:1", Renewals: 2}), a.Epoch(), b.Epoch())
		if rec, _, _ := store.ReadLease(t.Context(), blobs); rec.Renewals != 1 {
			t.Fatalf("the superseded leader's renewal was written: %+v", rec)
		}
	})
}

func TestAStandbyClaimsTheNextEpochWhenTheLeaseIsReleased(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		a := lead(t, blobs, "a")
		if err := a.Renew(t.Context(), store.LeaseRecord{Addr: "a:1", Released: true}); err != nil {
			t.Fatal(err)
		}
		var seen []string
		b, err := store.AwaitLease(t.Context(), blobs, "b", "b:1", time.Hour, time.Millisecond, func(r store.LeaseRecord) { seen = append(seen, r.Addr) })
		if err != nil {
			t.Fatalf("AwaitLease: %v", err)
		}
		if b.Epoch() != a.Epoch()+1 || len(seen) == 0 || seen[0] != "a:1" {
			t.Fatalf("standby claimed epoch %d having seen %v; want epoch %d after seeing a:1", b.Epoch(), seen, a.Epoch()+1)
		}
		superseded(t, a.Check(t.Context()), a.Epoch(), b.Epoch())
	})
}

func TestAStandbyWaitsWhileTheLeaseIsRenewed(t *testing.T) {
	blobs := blob.Memory()
	a := lead(t, blobs, "a")
	if err := a.Renew(t.Context(), store.LeaseRecord{Addr: "a:1"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	renewals := 0
	_, err := store.AwaitLease(ctx, blobs, "b", "b:1", time.Hour, time.Millisecond, func(store.LeaseRecord) {
		renewals++
		if renewals == 20 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("AwaitLease on a held lease returned %v, want it to wait until cancelled", err)
	}
	if err := a.Check(t.Context()); err != nil {
		t.Fatalf("the leader was superseded by a waiting standby: %v", err)
	}
}
