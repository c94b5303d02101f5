package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/blob"
)

// Leases: which of several coordinators on one store leads.
//
// The leader renews a lease record in the store every third of the
// lease period: a plain write that says who leads, where it serves and
// how often it renewed. A standby reads the record and waits; when the
// record did not change for a whole period by the standby's own clock
// (no clocks are compared between machines), or the leader released
// it, the standby claims the next epoch (Lead). The lease only tells
// the standbys when to claim: what fences a leader that still runs, a
// frozen one that wakes up, say, is the epoch its claim superseded,
// which every write that decides output checks (fence.go). Two standbys
// that claim at once get two epochs; the newer leads and the older is
// deposed at its first check.

// LeaseRecord is the content of the lease.
type LeaseRecord struct {
	Epoch  uint64 `json:"epoch"`
	Holder string `json:"holder"`
	// Addr is where the leader serves its clients and workers.
	Addr string `json:"addr"`
	// Renewals counts the leader's renewals: the record changes at each.
	Renewals uint64 `json:"renewals"`
	// PeriodMillis is the leader's lease period.
	PeriodMillis int64 `json:"period_ms"`
	// Released says the leader gave the lease up (a handover): a standby
	// claims at once.
	Released bool `json:"released,omitempty"`
}

const leaseKey = "cluster/leader/lease"

// ReadLease returns the lease record of blobs, and false if there is
// none.
func ReadLease(ctx context.Context, blobs blob.Store) (LeaseRecord, bool, error) {
	b, err := blobs.Get(ctx, leaseKey)
	if errors.Is(err, blob.ErrNotFound) {
		return LeaseRecord{}, false, nil
	}
	if err != nil {
		return LeaseRecord{}, false, fmt.Errorf("reading the lease: %w", err)
	}
	var r LeaseRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return LeaseRecord{}, false, corrupt(leaseKey, "not a lease record: %v", err)
	}
	return r, true, nil
}

// Renew writes the lease record r for leadership l after checking that
// l still leads: a superseded leader renews nothing (the error wraps
// ErrFenced).
func (l *Leadership) Renew(ctx context.Context, r LeaseRecord) error {
	if err := l.Check(ctx); err != nil {
		return err
	}
	r.Epoch = l.epoch
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := l.blobs.Put(ctx, leaseKey, b); err != nil {
		return fmt.Errorf("renewing the lease of epoch %d: %w", l.epoch, err)
	}
	return nil
}

// LeaseWatch decides, from what a standby reads of the lease over time,
// when the lease expired. It is pure: the caller reads the store and
// passes the time.
type LeaseWatch struct {
	// Period is how long an unchanged lease stays valid.
	Period time.Duration
	// Self is the watcher's own address: a lease it released itself (it
	// handed over and waits as a standby now) expires only after Period,
	// so that another standby takes over first.
	Self string

	seen  bool
	last  []byte
	since time.Time
}

// Observe takes the lease's raw content at now (nil: no lease) and
// reports whether it expired: released, or unchanged (also absent) for
// Period since the watch first saw it so.
func (w *LeaseWatch) Observe(raw []byte, now time.Time) bool {
	if !w.seen || !bytes.Equal(raw, w.last) {
		w.seen, w.last, w.since = true, bytes.Clone(raw), now
		if raw != nil {
			var r LeaseRecord
			if json.Unmarshal(raw, &r) == nil && r.Released && (r.Addr != w.Self || w.Self == "") {
				return true
			}
		}
		return false
	}
	return now.Sub(w.since) >= w.Period
}

// AwaitLease waits until the lease of blobs expires, reading it every
// poll, and then claims the next epoch for holder (Lead); self is the
// caller's address (LeaseWatch.Self). It calls
// observed with each lease record read, so that the caller can tell
// clients where the leader is. It returns when ctx ends.
func AwaitLease(ctx context.Context, blobs blob.Store, holder, self string, period, poll time.Duration, observed func(LeaseRecord)) (*Leadership, error) {
	w := LeaseWatch{Period: period, Self: self}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		raw, err := blobs.Get(ctx, leaseKey)
		switch {
		case errors.Is(err, blob.ErrNotFound):
			raw = nil
		case err != nil:
			// An unreachable store keeps the lease as it was: whoever
			// leads cannot commit either, and claiming now could not be
			// written anyway.
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			raw = w.last
		}
		var rec LeaseRecord
		if raw != nil && json.Unmarshal(raw, &rec) == nil && observed != nil {
			observed(rec)
		}
		if w.Observe(raw, time.Now()) {
			return Lead(ctx, blobs, holder)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}
