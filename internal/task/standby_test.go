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
