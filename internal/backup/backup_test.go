package backup

import (
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/weir-stream/weir/internal/exchange"
)

func batch(seq int64, n int) exchange.Element {
	b := exchange.GetBuffer()
	b.N = n
	return exchange.Element{Kind: exchange.Data, Buf: b, Seq: seq}
}

func mark(seq int64) exchange.Element {
	return exchange.Element{Kind: exchange.Watermark, Seq: seq, Time: seq}
}

// describe names elements the way the tables below write them: "d10+10"
// is a batch of 10 records from record 10, "w20" a watermark after 20.
func describe(es []exchange.Element) []string {
	var out []string
	for _, e := range es {
		switch e.Kind {
		case exchange.Data:
			out = append(out, "d"+itoa(e.Seq)+"+"+itoa(int64(e.Buf.N)))
		case exchange.Watermark:
			out = append(out, "w"+itoa(e.Seq))
		case exchange.Idle:
			out = append(out, "i"+itoa(e.Seq))
		case exchange.End:
			out = append(out, "e"+itoa(e.Seq))
		default:
			out = append(out, "?"+itoa(e.Seq))
		}
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// channel retains, on writer 0's channel 0 from record 0, batches of 10
// records from 0, 10 and 20 with a watermark and an idleness element
// after record 20 and an end after record 30.
func channel() *Store {
	b := New(0)
	b.Start(0, 0, 0)
	b.Keep(0, 0, batch(0, 10))
	b.Keep(0, 0, batch(10, 10))
	b.Keep(0, 0, mark(20))
	b.Keep(0, 0, exchange.Element{Kind: exchange.Idle, Seq: 20})
	b.Keep(0, 0, batch(20, 10))
	b.Keep(0, 0, exchange.Element{Kind: exchange.End, Seq: 30})
	return b
}

func TestTrimDropsWhatTheReceiversStateReflects(t *testing.T) {
	for _, c := range []struct {
		name string
		upTo int64
		want []string
	}{
		{"nothing before the base", 0, []string{"d0+10", "d10+10", "w20", "i20", "d20+10", "e30"}},
		{"a batch that ends after the trim point stays", 5, []string{"d0+10", "d10+10", "w20", "i20", "d20+10", "e30"}},
		{"a batch that ends at the trim point goes", 10, []string{"d10+10", "w20", "i20", "d20+10", "e30"}},
		{"control elements sent at the trim point stay", 20, []string{"w20", "i20", "d20+10", "e30"}},
		{"an end after the last record stays", 30, []string{"e30"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := channel()
			b.Trim(0, 0, c.upTo)
			got, err := b.Since(0, 0, c.upTo)
			if err != nil || !slices.Equal(describe(got), c.want) {
				t.Fatalf("after trimming to %d: %v %v, want %v", c.upTo, describe(got), err, c.want)
			}
			if c.upTo > 0 {
				if _, err := b.Since(0, 0, c.upTo-1); !errors.Is(err, ErrLost) {
					t.Fatalf("since %d after trimming to %d: %v, want ErrLost", c.upTo-1, c.upTo, err)
				}
			}
		})
	}
}

func TestSinceStartsInTheMiddleOfABatch(t *testing.T) {
	for _, c := range []struct {
		name string
		from int64
		want []string
	}{
		{"from the start", 0, []string{"d0+10", "d10+10", "w20", "i20", "d20+10", "e30"}},
		{"from inside the first batch", 3, []string{"d0+10", "d10+10", "w20", "i20", "d20+10", "e30"}},
		{"from the last record of a batch", 19, []string{"d10+10", "w20", "i20", "d20+10", "e30"}},
		{"from a batch boundary with control elements at it", 20, []string{"w20", "i20", "d20+10", "e30"}},
		{"from inside the last batch", 25, []string{"d20+10", "e30"}},
		{"from everything sent", 30, []string{"e30"}},
		{"from beyond everything sent", 31, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := channel().Since(0, 0, c.from)
			if err != nil || !slices.Equal(describe(got), c.want) {
				t.Fatalf("since %d: %v %v, want %v", c.from, describe(got), err, c.want)
			}
		})
	}
}

func TestAChannelNotStartedHasNothingToReplay(t *testing.T) {
	b := New(0)
	b.Keep(0, 0, batch(0, 10))
	if b.Retained() != 0 {
		t.Fatalf("retained %d bytes for a channel not started", b.Retained())
	}
	if _, ok := b.Base(0, 0); ok {
		t.Fatal("a channel not started has a base")
	}
	if _, err := b.Since(0, 0, 0); !errors.Is(err, ErrLost) {
		t.Fatalf("since 0 on a channel not started: %v, want ErrLost", err)
	}
}

func TestBarriersAndLatencyMarkersAreNotRetained(t *testing.T) {
	b := New(0)
	b.Start(0, 0, 0)
	b.Keep(0, 0, exchange.Element{Kind: exchange.Barrier, Checkpoint: 1})
	b.Keep(0, 0, exchange.Element{Kind: exchange.Latency})
	if got, _ := b.Since(0, 0, 0); len(got) != 0 || b.Retained() != 0 {
		t.Fatalf("retained %v (%d bytes), want nothing", describe(got), b.Retained())
	}
}

// Past its bound a store drops everything on every channel, refuses
// replays, and is valid again from the next mark on.
func TestTheBoundDropsEverythingUntilTheNextMark(t *testing.T) {
	for _, c := range []struct {
		name     string
		limit    int64
		lost     bool
		retained bool
	}{
		{"no bound", 0, false, true},
		{"within the bound", 1 << 30, false, true},
		{"past the bound", 1, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := New(c.limit)
			b.Start(0, 0, 0)
			b.Start(1, 0, 0)
			b.Keep(1, 0, mark(0))
			b.Keep(0, 0, batch(0, 10))
			if b.Lost() != c.lost || (b.Retained() > 0) != c.retained {
				t.Fatalf("lost %v, retained %d bytes; want lost %v", b.Lost(), b.Retained(), c.lost)
			}
			_, err := b.Since(1, 0, 0)
			if errors.Is(err, ErrLost) != c.lost {
				t.Fatalf("replay of the other writer's channel: %v, want lost %v", err, c.lost)
			}
			if !c.lost {
				return
			}
			if base, ok := b.Base(0, 0); !ok || base >= 0 {
				t.Fatalf("base after the drop: %d %v, want a negative one", base, ok)
			}
			b.limit = 0
			b.Mark(1, [][]int64{{10}, {0}})
			if b.Lost() {
				t.Fatal("still lost after a mark")
			}
			b.Keep(0, 0, batch(10, 10))
			if got, err := b.Since(0, 0, 10); err != nil || !slices.Equal(describe(got), []string{"d10+10"}) {
				t.Fatalf("replay after the mark: %v %v", describe(got), err)
			}
			if _, err := b.Since(0, 0, 5); !errors.Is(err, ErrLost) {
				t.Fatalf("replay from before the mark: %v, want ErrLost", err)
			}
		})
	}
}

// A completed checkpoint trims up to the latest mark at or before it;
// later marks stay for their own completion.
func TestCompleteTrimsAtTheLatestMarkUpToTheCheckpoint(t *testing.T) {
	for _, c := range []struct {
		name     string
		complete []int64
		from     int64
		want     []string
	}{
		{"nothing completed", nil, 0, []string{"d0+10", "d10+10", "w20", "i20", "d20+10", "e30"}},
		{"an unmarked checkpoint before every mark", []int64{1}, 0, []string{"d0+10", "d10+10", "w20", "i20", "d20+10", "e30"}},
		{"the first mark", []int64{2}, 10, []string{"d10+10", "w20", "i20", "d20+10", "e30"}},
		{"a later checkpoint covers both marks", []int64{5}, 20, []string{"w20", "i20", "d20+10", "e30"}},
		{"one after the other", []int64{2, 3}, 20, []string{"w20", "i20", "d20+10", "e30"}},
		{"an earlier checkpoint after a later one", []int64{3, 2}, 20, []string{"w20", "i20", "d20+10", "e30"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := channel()
			b.Mark(2, [][]int64{{10}})
			b.Mark(3, [][]int64{{20}})
			for _, id := range c.complete {
				b.Complete(id)
			}
			if base, _ := b.Base(0, 0); base != c.from {
				t.Fatalf("base %d, want %d", base, c.from)
			}
			got, err := b.Since(0, 0, c.from)
			if err != nil || !slices.Equal(describe(got), c.want) {
				t.Fatalf("since %d: %v %v, want %v", c.from, describe(got), err, c.want)
			}
		})
	}
}

// Trimmed buffers leave the store's count of retained bytes; what is
// left counts only what stays.
func TestTrimReleasesTheBytesItDrops(t *testing.T) {
	b := channel()
	all := b.Retained()
	b.Trim(0, 0, 30)
	if got, want := b.Retained(), int64(controlBytes); got != want {
		t.Fatalf("retained %d bytes after trimming all but the end (of %d), want %d", got, all, want)
	}
}
