package task

import (
	"strings"
	"testing"

	"github.com/weir-stream/weir/internal/exchange"
)

// An instance behind its pair checks what it does not deliver against
// the control elements the pair delivered: the same element passes;
// another one, or a control element where records went, or records where
// a control element went, is a divergence.
func TestCursorCheckFindsDivergence(t *testing.T) {
	var c cursor
	c.record(10, exchange.Element{Kind: exchange.Barrier, Checkpoint: 3})
	c.record(20, exchange.Element{Kind: exchange.Watermark, Time: 500})
	c.pos = 30
	cases := []struct {
		at, n int64
		e     exchange.Element
		want  string // "" for no divergence
	}{
		{10, 1, exchange.Element{Kind: exchange.Barrier, Checkpoint: 3}, ""},
		{20, 1, exchange.Element{Kind: exchange.Watermark, Time: 500}, ""},
		{0, 10, exchange.Element{Kind: exchange.Data}, ""},
		{11, 9, exchange.Element{Kind: exchange.Data}, ""},
		{10, 1, exchange.Element{Kind: exchange.Barrier, Checkpoint: 4}, "barrier (4) where the other sent a barrier (3)"},
		{20, 1, exchange.Element{Kind: exchange.Idle}, "idle (0) where the other sent a watermark (500)"},
		{15, 1, exchange.Element{Kind: exchange.Watermark, Time: 400}, "watermark where the other sent records"},
		{5, 10, exchange.Element{Kind: exchange.Data}, "records where the other sent a barrier"},
	}
	for _, tc := range cases {
		err := c.check(tc.at, tc.n, tc.e)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s at %d: unexpected divergence: %v", tc.e.Kind, tc.at, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s at %d: got %v, want %q", tc.e.Kind, tc.at, err, tc.want)
		}
	}
}

// Positions older than the ring of recorded control elements are not
// checked: nothing is known about them.
func TestCursorCheckIgnoresPositionsOlderThanItsRing(t *testing.T) {
	var c cursor
	for i := range int64(100) {
		c.record(i*2, exchange.Element{Kind: exchange.Watermark, Time: i})
	}
	if err := c.check(1, 1, exchange.Element{Kind: exchange.Idle}); err != nil {
		t.Fatalf("an old position was checked: %v", err)
	}
	if err := c.check(199, 1, exchange.Element{Kind: exchange.Idle}); err == nil {
		t.Fatal("a recent divergence went unnoticed")
	}
}

// The input log: a standby reads from a checkpoint's mark, its lag is
// what it has yet to apply, a completed checkpoint trims up to its mark
// but not past what the standby still reads, and a log past its bound is
// lost to the standby until a later mark.
func TestInputLogMarksTrimsAndBounds(t *testing.T) {
	data := func(n int) logEntry {
		return logEntry{e: exchange.Element{Kind: exchange.Data, Buf: &exchange.Buffer{B: make([]byte, n), N: 1}}}
	}
	l := newInputLog(1000)
	l.marks = append(l.marks, logMark{id: 0})
	l.append(data(100))
	l.mark(1)
	l.append(data(100))
	l.append(data(100))
	at, ok := l.startReading(0)
	if !ok || at != 0 || l.lag() != 3 {
		t.Fatalf("reading from checkpoint 0: at %d, ok %v, lag %d; want 0, true, 3", at, ok, l.lag())
	}
	if _, ok, _, _ := l.next(0); !ok {
		t.Fatal("no first entry")
	}
	l.trim(1) // the standby still applies entry 0: nothing goes
	if l.base != 0 || len(l.entries) != 3 {
		t.Fatalf("trimmed to base %d with %d entries while the standby read entry 0", l.base, len(l.entries))
	}
	if _, ok, _, _ := l.next(1); !ok || l.lag() != 2 {
		t.Fatalf("after entry 0 the lag is %d, want 2", l.lag())
	}
	l.trim(1)
	if l.base != 1 || l.bytes != 200 {
		t.Fatalf("trim to checkpoint 1's mark: base %d, %d bytes; want 1 and 200", l.base, l.bytes)
	}
	l.append(data(900)) // past the bound
	if _, _, _, lost := l.next(2); !lost {
		t.Fatal("a log past its bound was not lost to its standby")
	}
	l.stopReading()
	if _, ok := l.startReading(1); ok {
		t.Fatal("a standby started from a mark the lost log dropped")
	}
	l.mark(2)
	if at, ok := l.startReading(2); !ok || at != l.base {
		t.Fatalf("after the next mark: at %d, ok %v; want %d, true", at, ok, l.base)
	}
}
