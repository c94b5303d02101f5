package standbylog

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/weir-stream/weir/internal/exchange"
)

func data(n int) Entry {
	return Entry{E: exchange.Element{Kind: exchange.Data, Buf: &exchange.Buffer{B: make([]byte, n), N: 1}}}
}

// A standby reads from a checkpoint's mark, its lag is what it has yet to
// apply, a completed checkpoint trims up to its mark but not past what
// the standby still reads, and a log past its bound is lost to the
// standby until a later mark.
func TestTheLogMarksTrimsAndBounds(t *testing.T) {
	l := New(1000)
	l.Mark(0)
	l.Append(data(100))
	l.Mark(1)
	l.Append(data(100))
	l.Append(data(100))
	at, ok := l.StartReading(0)
	if !ok || at != 0 || l.Lag() != 3 {
		t.Fatalf("reading from checkpoint 0: at %d, ok %v, lag %d; want 0, true, 3", at, ok, l.Lag())
	}
	if _, ok, _, _ := l.Next(0); !ok {
		t.Fatal("no first entry")
	}
	l.Trim(1) // the standby still applies entry 0: nothing goes
	if l.base != 0 || l.Len() != 3 {
		t.Fatalf("trimmed to base %d with %d entries while the standby read entry 0", l.base, l.Len())
	}
	if _, ok, _, _ := l.Next(1); !ok || l.Lag() != 2 {
		t.Fatalf("after entry 0 the lag is %d, want 2", l.Lag())
	}
	l.Trim(1)
	if l.base != 1 || l.bytes != 200 {
		t.Fatalf("trim to checkpoint 1's mark: base %d, %d bytes; want 1 and 200", l.base, l.bytes)
	}
	l.Append(data(900)) // past the bound
	if _, _, _, lost := l.Next(2); !lost {
		t.Fatal("a log past its bound was not lost to its standby")
	}
	l.StopReading()
	if _, ok := l.StartReading(1); ok {
		t.Fatal("a standby started from a mark the lost log dropped")
	}
	l.Mark(2)
	if at, ok := l.StartReading(2); !ok || at != l.base {
		t.Fatalf("after the next mark: at %d, ok %v; want %d, true", at, ok, l.base)
	}
}

// The log's copy of a batch is its own: the primary may recycle the
// buffer it consumed.
func TestAppendCopiesTheBatch(t *testing.T) {
	l := New(0)
	en := data(3)
	l.Append(en)
	en.E.Buf.B[0] = 7
	if got, _, _, _ := l.Next(0); got.E.Buf == en.E.Buf || got.E.Buf.B[0] != 0 {
		t.Fatal("the log shares the primary's buffer")
	}
}

// A primary restarted from a checkpoint consumes anew from its mark:
// what the log held goes, a new standby reads from that mark on, and
// earlier marks are gone.
func TestRestartStartsTheLogAgainAtTheCheckpoint(t *testing.T) {
	l := New(0)
	l.Mark(1)
	l.Append(data(10))
	l.Mark(2)
	l.Append(data(10))
	if _, ok := l.StartReading(1); !ok {
		t.Fatal("no mark of checkpoint 1")
	}
	l.Restart(2)
	if l.Len() != 0 || l.Lag() != 0 {
		t.Fatalf("after the restart: %d entries, lag %d; want none", l.Len(), l.Lag())
	}
	if _, ok := l.StartReading(1); ok {
		t.Fatal("a standby started from a mark before the restart")
	}
	at, ok := l.StartReading(2)
	if !ok || at != 3 {
		t.Fatalf("reading from the restart's checkpoint: at %d, ok %v; want 3 (indexes go on, past a gap of one)", at, ok)
	}
	l.Append(data(10))
	if _, ok, _, lost := l.Next(at); !ok || lost {
		t.Fatal("the entry appended after the restart is not read")
	}
}

// A primary that stops hands over to its standby only when the log is
// intact and the primary held no input outside its gate; the standby
// then sees the end of the log once it applied it.
func TestHandOver(t *testing.T) {
	for _, c := range []struct {
		name         string
		unsafe, lost bool
		want         bool
	}{
		{"an intact log of a settled primary", false, false, true},
		{"a primary holding input outside its gate", true, false, false},
		{"a log lost for its size", false, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := New(0)
			l.Mark(0)
			l.Append(data(1))
			l.SetUnsafe(c.unsafe)
			if c.lost {
				l.dropLocked()
			}
			if got := l.HandOver(); got != c.want {
				t.Fatalf("HandOver = %v, want %v", got, c.want)
			}
			_, ok, gone, _ := l.Next(1)
			if ok || gone != c.want {
				t.Fatalf("after the entries: ok %v, gone %v; want gone %v", ok, gone, c.want)
			}
			l.TakenOver()
			if _, _, gone, _ := l.Next(1); gone {
				t.Fatal("the log of a standby that took over still says its primary is gone")
			}
		})
	}
}

// ship sends l from checkpoint from's mark into a channel until the
// log's entries are sent, then stops.
func ship(t *testing.T, l *Log, from int64) []exchange.Element {
	t.Helper()
	send, err := l.Ship(from)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []exchange.Element
	n := l.Len()
	err = send(ctx, func(e exchange.Element) error {
		got = append(got, e)
		if en, _ := decodeEntry(e.Buf.B); en.Kind != wireMark {
			if n--; n == 0 {
				cancel()
			}
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("shipping ended with %v", err)
	}
	return got
}

// Shipping sends each mark after the checkpoint shipped from before the
// entries that follow it, so that the receiving log holds the same marks
// at the same places; entries decode to what was appended.
func TestShipSendsMarksBeforeTheEntriesAfterThem(t *testing.T) {
	l := New(0)
	l.Mark(1)
	l.Append(Entry{Kind: Element, Ch: 1, E: exchange.Element{Kind: exchange.Data, Seq: 4, Buf: &exchange.Buffer{B: []byte{1, 2, 3}, N: 3}}, Skip: 1, Limit: 3})
	l.Mark(2)
	l.Append(Entry{Kind: Abort, Checkpoint: 3})
	l.Append(Entry{Kind: ReplayStart, Ch: 2, E: exchange.Element{Seq: 40}})
	l.Mark(4)
	l.Append(Entry{Kind: Element, Ch: 0, E: exchange.Element{Kind: exchange.Watermark, Time: 9, Seq: 7}})

	var kinds []Kind
	r := New(0)
	for _, e := range ship(t, l, 1) {
		en, err := decodeEntry(e.Buf.B)
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, en.Kind)
		if more, err := r.Receive(e.Buf.B); !more || err != nil {
			t.Fatalf("receiving %v: more %v, %v", en, more, err)
		}
	}
	want := []Kind{Element, wireMark, Abort, ReplayStart, wireMark, Element}
	if len(kinds) != len(want) {
		t.Fatalf("shipped %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("shipped %v, want %v", kinds, want)
		}
	}
	got, sent := r.Entries(), l.Entries()
	for i := range sent {
		g, s := got[i], sent[i]
		if g.Kind != s.Kind || g.Ch != s.Ch || g.Skip != s.Skip || g.Limit != s.Limit || g.Checkpoint != s.Checkpoint ||
			g.E.Kind != s.E.Kind || g.E.Seq != s.E.Seq || g.E.Time != s.E.Time {
			t.Fatalf("entry %d arrived as %+v, was %+v", i, g, s)
		}
		if s.E.Buf != nil && (g.E.Buf.N != s.E.Buf.N || string(g.E.Buf.B) != string(s.E.Buf.B)) {
			t.Fatalf("entry %d's batch arrived as %v, was %v", i, g.E.Buf, s.E.Buf)
		}
	}
	if at, ok := r.StartReading(4); !ok || at != 3 {
		t.Fatalf("the receiving log's mark of checkpoint 4: at %d, ok %v; want 3", at, ok)
	}
}

// A log that is lost while it is shipped ends the stream with the element
// that stops the standby; the receiving log drops what it holds and
// takes nothing more.
func TestALostLogStopsTheStandby(t *testing.T) {
	l := New(10)
	l.Mark(1)
	l.Append(data(1))
	send, err := l.Ship(1)
	if err != nil {
		t.Fatal(err)
	}
	r := New(0)
	l.Append(data(100)) // past the bound
	err = send(context.Background(), func(e exchange.Element) error {
		_, err := r.Receive(e.Buf.B)
		return err
	})
	if !errors.Is(err, ErrLost) {
		t.Fatalf("shipping a lost log ended with %v, want ErrLost", err)
	}
	if _, _, _, lost := r.Next(0); !lost {
		t.Fatal("the receiving log is not lost")
	}
	if more, _ := r.Receive(LostElement().Buf.B); more {
		t.Fatal("more may follow the end")
	}
	if _, err := l.Ship(1); !errors.Is(err, ErrLost) {
		t.Fatalf("shipping from a mark the lost log dropped: %v, want ErrLost", err)
	}
}

// A primary restarted in place ends the shipping of its failed
// incarnation's log with the element that stops the standby, also when
// the shipper had sent every entry: the new incarnation's input from the
// checkpoint is not shipped after the old one's, which the standby has
// already applied (it counted that input twice when it took over).
func TestARestartStopsAStandbyThatHadReadEverything(t *testing.T) {
	l := New(0)
	l.Mark(1)
	l.Append(data(1))
	l.Mark(2)
	l.Append(data(1))
	send, err := l.Ship(1)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []Kind
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err = send(ctx, func(e exchange.Element) error {
		en, err := decodeEntry(e.Buf.B)
		if err != nil {
			return err
		}
		kinds = append(kinds, en.Kind)
		switch len(kinds) {
		case 3: // the entry after mark 2: all of the log
			l.Restart(2)
			l.Append(data(1)) // the new incarnation's first input
			l.Signal()
		case 4:
			cancel() // shipping would wait for more
		}
		return nil
	})
	if !errors.Is(err, ErrLost) {
		t.Fatalf("shipping ended with %v, want ErrLost", err)
	}
	want := []Kind{Element, wireMark, Element, wireLost}
	if !slices.Equal(kinds, want) {
		t.Fatalf("shipped %v, want %v", kinds, want)
	}
}

// A promoted standby logs its own input: what its lost primary still
// ships is refused.
func TestAPromotedStandbysLogTakesNoMoreFromItsPrimary(t *testing.T) {
	r := New(0)
	r.Mark(1)
	r.add(data(1), false)
	r.LogOwnInput()
	if r.Len() != 0 {
		t.Fatalf("the promoted standby's log holds %d of its primary's entries", r.Len())
	}
	if more, _ := r.Receive(wireElement(data(1)).Buf.B); more {
		t.Fatal("the log of a promoted standby takes its lost primary's entries")
	}
}

func TestReceiveRefusesWhatDoesNotDecode(t *testing.T) {
	r := New(0)
	more, err := r.Receive([]byte{byte(Element)})
	if more || !errors.Is(err, ErrBadEntry) {
		t.Fatalf("more %v, %v; want the end and ErrBadEntry", more, err)
	}
}

// A shipped barrier keeps its marks: whether it overtook its queue and
// whether its checkpoint must be aligned.
func TestAShippedBarrierKeepsItsMarks(t *testing.T) {
	for _, want := range []exchange.Element{
		{Kind: exchange.Barrier, Checkpoint: 3},
		{Kind: exchange.Barrier, Checkpoint: 4, Unaligned: true},
		{Kind: exchange.Barrier, Checkpoint: 5, MustAlign: true},
	} {
		en, err := decodeEntry(appendEntry(nil, Entry{Kind: Element, E: want}))
		if err != nil {
			t.Fatal(err)
		}
		if got := en.E; got.Checkpoint != want.Checkpoint || got.Unaligned != want.Unaligned || got.MustAlign != want.MustAlign {
			t.Fatalf("shipped %+v, received %+v", want, got)
		}
	}
}
