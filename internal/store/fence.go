package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/blob"
)

// Fencing: only the newest leader of a store may decide output.
//
// A coordinator claims a leadership epoch when it starts (Lead): one more
// than any epoch claimed before, taken by a create-if-absent write of the
// epoch's key, so that two coordinators starting at once get different
// epochs. Before every write that decides output (a checkpoint's
// metadata, the deletion of checkpoints, a job record, an order to
// commit) the leader checks (Check) that no newer epoch was claimed. A
// leader whose check fails was superseded: it must write nothing more.
//
// Checkpoints returned by Fenced run the check themselves. Commit checks
// before it writes the metadata and again after: a Commit that returns nil
// was not superseded until its metadata was durable, so a successor,
// which claims its epoch before it looks for the latest checkpoint, finds
// that checkpoint, and the caller may order the sinks to commit it. A
// Commit that finds itself superseded after the write leaves the metadata
// (a successor may already restore it) and returns an error wrapping
// ErrFenced: the caller must not order the commit; a successor that
// restores the checkpoint commits its sinks' transactions.

// ErrFenced means a newer leader claimed the store: the caller was
// superseded and must not write anything that decides output.
var ErrFenced = errors.New("fenced: a newer leader holds the store")

// Fence guards the writes that decide output.
type Fence interface {
	// Check returns nil if the caller still leads, an error wrapping
	// ErrFenced if it was superseded, and another error if it cannot
	// tell (the store is unreachable); only nil allows the write.
	Check(ctx context.Context) error
}

// SupersededError is the error of a leader whose epoch was superseded. It
// wraps ErrFenced.
type SupersededError struct {
	// Epoch is the caller's epoch; By the newest claimed, or 0 if the
	// caller's own claim disappeared from the store.
	Epoch, By uint64
	// Holder is how the newest leader described itself, if known.
	Holder string
}

func (e *SupersededError) Error() string {
	if e.By == 0 {
		return fmt.Sprintf("the claim of leadership epoch %d is gone from the store (was the store emptied?)", e.Epoch)
	}
	s := fmt.Sprintf("leadership epoch %d superseded by epoch %d", e.Epoch, e.By)
	if e.Holder != "" {
		s += " (" + e.Holder + ")"
	}
	return s
}

func (e *SupersededError) Unwrap() error { return ErrFenced }

// Leadership is a claimed epoch of a store. Its methods are safe for
// concurrent use.
type Leadership struct {
	blobs blob.Store
	epoch uint64
}

// claim is the content of an epoch's key, for people reading the store.
type claim struct {
	Epoch   uint64    `json:"epoch"`
	Holder  string    `json:"holder"`
	Claimed time.Time `json:"claimed"`
}

// Lead claims the next leadership epoch of blobs for holder (a
// description such as "coordinator on host:port, pid 42"): one more than
// the newest claimed so far. Of several callers at once each gets its own
// epoch, and the newest supersedes the others. Lead then deletes the
// claims more than keptClaims epochs old: only the newest claim fences,
// and keeping the recent ones makes sure that a caller whose listing is
// stale does not claim an epoch again after its deletion. (If it did,
// it would be superseded at once: the newest claim is never deleted.)
func Lead(ctx context.Context, blobs blob.Store, holder string) (*Leadership, error) {
	for {
		keys, err := blobs.List(ctx, leaderPrefix)
		if err != nil {
			return nil, fmt.Errorf("claiming leadership: %w", err)
		}
		n := newest(keys) + 1
		data, err := json.Marshal(claim{Epoch: n, Holder: holder, Claimed: time.Now().UTC()})
		if err != nil {
			return nil, err
		}
		err = blobs.PutIfAbsent(ctx, epochKey(n), data)
		if errors.Is(err, blob.ErrExists) {
			continue // another claimed n first: list again and take the next
		}
		if err != nil {
			return nil, fmt.Errorf("claiming leadership epoch %d: %w", n, err)
		}
		for _, k := range keys {
			if e, ok := parseEpochKey(k); ok && e+keptClaims <= n {
				blobs.Delete(ctx, k) // best effort: a left-over claim fences nobody wrongly
			}
		}
		return &Leadership{blobs: blobs, epoch: n}, nil
	}
}

// keptClaims is how many of the newest claims Lead keeps.
const keptClaims = 16

// newest returns the newest epoch claimed among keys, 0 if none.
func newest(keys []string) uint64 {
	var n uint64
	for _, k := range keys {
		if e, ok := parseEpochKey(k); ok && e > n {
			n = e
		}
	}
	return n
}

// Epoch returns the claimed epoch (1 for the first leader of a store).
func (l *Leadership) Epoch() uint64 { return l.epoch }

// Check implements Fence: it returns a *SupersededError if a newer epoch
// was claimed or the caller's claim is gone, by one listing of the
// claims.
func (l *Leadership) Check(ctx context.Context) error {
	keys, err := l.blobs.List(ctx, leaderPrefix)
	if err != nil {
		return fmt.Errorf("checking leadership epoch %d: %w", l.epoch, err)
	}
	n := newest(keys)
	switch {
	case n == l.epoch:
		return nil
	case n < l.epoch:
		return &SupersededError{Epoch: l.epoch}
	}
	e := &SupersededError{Epoch: l.epoch, By: n}
	if data, err := l.blobs.Get(ctx, epochKey(n)); err == nil {
		var c claim
		if json.Unmarshal(data, &c) == nil {
			e.Holder = c.Holder
		}
	}
	return e
}

// Fenced returns checkpoint storage over the same blob store whose
// writes that decide output check f first: Commit (before and after it
// writes the metadata, see the comment at the top of this file), Retain
// and DeleteUncommitted (before each checkpoint they delete). A failed
// check stops the write with an error wrapping f's.
func (c *Checkpoints) Fenced(f Fence) *Checkpoints {
	return &Checkpoints{blobs: c.blobs, fence: f, bases: c.bases, verified: c.verified}
}

// checkFence runs the fence's check, if there is a fence.
func (c *Checkpoints) checkFence(ctx context.Context) error {
	if c.fence == nil {
		return nil
	}
	return c.fence.Check(ctx)
}
