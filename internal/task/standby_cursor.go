package task

import (
	"fmt"
	"sync"

	"github.com/weir-stream/weir/internal/exchange"
)

// This file is the output cursors a primary and its local active standby
// share, one per output channel (standby.go): an element goes to the
// receiver only if it extends what either instance delivered, and the
// instance behind checks the control elements it does not deliver
// against those the other did, to find a task that is not deterministic.

// cursor is the position in a channel's stream (records and control
// elements counted together) up to which a primary or its standby
// delivered, with the latest control elements delivered, against which
// the instance behind checks the ones it does not deliver.
type cursor struct {
	mu    sync.Mutex
	pos   int64
	marks [64]ctlMark // ring of the latest control elements delivered
	n     int         // control elements recorded
}

// ctlMark is a control element delivered at pos.
type ctlMark struct {
	pos  int64
	kind exchange.Kind
	v    int64 // a barrier's checkpoint, a watermark's time
}

func markOf(pos int64, e exchange.Element) ctlMark {
	m := ctlMark{pos: pos, kind: e.Kind}
	switch e.Kind {
	case exchange.Barrier:
		m.v = e.Checkpoint
	case exchange.Watermark:
		m.v = e.Time
	}
	return m
}

// record notes control element e, delivered at pos.
func (c *cursor) record(pos int64, e exchange.Element) {
	c.marks[c.n%len(c.marks)] = markOf(pos, e)
	c.n++
}

// check compares element e, which covers [at, at+n) and is not delivered
// because the other instance delivered those positions, with what the
// ring says was delivered there: a control element where the other sent
// records, or records where it sent a control element, or another
// control element, means the two instances diverged. Positions older
// than the ring are not checked.
func (c *cursor) check(at, n int64, e exchange.Element) error {
	k := min(c.n, len(c.marks))
	if k == 0 {
		return nil
	}
	oldest := c.marks[(c.n-k)%len(c.marks)].pos
	if c.n > len(c.marks) && at < oldest {
		return nil
	}
	var found *ctlMark
	for i := range k {
		m := &c.marks[(c.n-1-i)%len(c.marks)]
		if m.pos >= at && m.pos < at+n {
			found = m
			break
		}
	}
	if e.Kind == exchange.Data {
		if found != nil {
			return fmt.Errorf("at position %d: one has records where the other sent a %s", found.pos, found.kind)
		}
		return nil
	}
	if want := markOf(at, e); found == nil {
		return fmt.Errorf("at position %d: one has a %s where the other sent records", at, e.Kind)
	} else if *found != want {
		return fmt.Errorf("at position %d: one has a %s (%d) where the other sent a %s (%d)", at, e.Kind, want.v, found.kind, found.v)
	}
	return nil
}
