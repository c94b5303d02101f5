package generator

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connector/connectortest"
)

type event struct {
	ID    int64
	Price uint64
}

func eventAt(i int64) event { return event{i, Mix(7, uint64(i)) % 1000} }

func events(n int64) []event {
	out := make([]event, n)
	for i := range out {
		out[i] = eventAt(int64(i))
	}
	return out
}

func TestConformance(t *testing.T) {
	bad := []connector.Position{{0x80}, {0x01, 0x00}}
	t.Run("New", func(t *testing.T) {
		connectortest.TestSource(t, connectortest.SourceCase[event]{
			New:          func(*testing.T) connector.Source[event] { return New(100, eventAt) },
			Want:         events(100),
			Parallelism:  []int{1, 2, 3, 8},
			BadPositions: bad,
		})
	})
	t.Run("Sequence", func(t *testing.T) {
		var want []int64
		for i := int64(-5); i < 95; i++ {
			want = append(want, i)
		}
		connectortest.TestSource(t, connectortest.SourceCase[int64]{
			New:          func(*testing.T) connector.Source[int64] { return Sequence(-5, 95) },
			Want:         want,
			BadPositions: bad,
		})
	})
	t.Run("empty", func(t *testing.T) {
		connectortest.TestSource(t, connectortest.SourceCase[int64]{
			New: func(*testing.T) connector.Source[int64] { return Sequence(3, 3) },
		})
	})
	t.Run("throttled", func(t *testing.T) {
		// A rate high enough that the test does not wait, but the token
		// bucket is in the path.
		connectortest.TestSource(t, connectortest.SourceCase[int64]{
			New: func(*testing.T) connector.Source[int64] { return Sequence(0, 50, WithRate(1e9)) },
			Want: func() (w []int64) {
				for i := range int64(50) {
					w = append(w, i)
				}
				return
			}(),
		})
	})
}

func TestStrided(t *testing.T) {
	got, err := connectortest.ReadAll(t.Context(), Sequence(10, 20), 3)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int64{{10, 13, 16, 19}, {11, 14, 17}, {12, 15, 18}}
	for s := range want {
		if d := connectortest.DiffSequence(got[s], want[s]); d != "" {
			t.Errorf("subtask %d %s", s, d)
		}
	}
}

func TestPositionErrors(t *testing.T) {
	src := New(10, func(i int64) int64 { return i })
	for _, tc := range []struct {
		info connector.SubtaskInfo
		pos  connector.Position
		msg  string
	}{
		{connector.SubtaskInfo{Subtask: 0, Parallelism: 1}, connector.Position{0x80}, "generator: corrupt position 80: want a uvarint index"},
		{connector.SubtaskInfo{Subtask: 1, Parallelism: 3}, binary.AppendUvarint(nil, 5), "generator: position index 5 does not belong to subtask 1 of 3"},
		{connector.SubtaskInfo{Subtask: 3, Parallelism: 3}, nil, "invalid subtask 3 of parallelism 3"},
	} {
		_, err := src.Open(t.Context(), tc.info, tc.pos)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Open(%+v, %x) = %v, want error containing %q", tc.info, []byte(tc.pos), err, tc.msg)
		}
	}
	if _, err := New(1, func(int64) int { return 0 }, WithRate(-1)).Open(t.Context(), connector.SubtaskInfo{Parallelism: 1}, nil); err == nil ||
		!strings.Contains(err.Error(), "rate must be positive") {
		t.Errorf("negative rate: got %v", err)
	}
}

func TestUnbounded(t *testing.T) {
	src := New(-1, func(i int64) int64 { return i * 2 })
	info := connector.SubtaskInfo{Subtask: 1, Parallelism: 2}
	r, err := src.Open(t.Context(), info, nil)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]int64, 1000)
	for range 5 {
		if n, err := r.Read(t.Context(), buf); n != len(buf) || err != nil {
			t.Fatalf("Read = %d, %v", n, err)
		}
	}
	pos := r.Position()
	r.Close()
	r, err = src.Open(t.Context(), info, pos)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := r.Read(t.Context(), buf[:2]); n != 2 || err != nil || buf[0] != 2*10001 || buf[1] != 2*10003 {
		t.Fatalf("after reopening: Read = %d, %v, %v; want 20002, 20006", n, err, buf[:2])
	}

	// Near the end of the index space the source ends without overflowing.
	seq := Sequence(0, math.MaxInt64)
	start := uint64(math.MaxInt64 - 10)
	start -= start % 3
	r, err = seq.Open(t.Context(), connector.SubtaskInfo{Subtask: 0, Parallelism: 3}, binary.AppendUvarint(nil, start))
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for {
		n, err := r.Read(t.Context(), buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
	}
	if len(got) != 4 || got[3] != math.MaxInt64-1 || got[3]-got[2] != 3 {
		t.Errorf("end of index space: got %v", got)
	}
	end := r.Position()
	r, err = seq.Open(t.Context(), connector.SubtaskInfo{Subtask: 0, Parallelism: 3}, end)
	if err != nil {
		t.Fatalf("reopening at the end (%x): %v", []byte(end), err)
	}
	if n, err := r.Read(t.Context(), buf); n != 0 || err != io.EOF {
		t.Errorf("reopened at the end: Read = %d, %v", n, err)
	}
}

func TestMix(t *testing.T) {
	// The first outputs of SplitMix64 seeded with 0 (reference values of
	// the original C implementation).
	want := []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f}
	for i, w := range want {
		if got := Mix(0, uint64(i)); got != w {
			t.Errorf("Mix(0, %d) = %#x, want %#x", i, got, w)
		}
	}
	if Mix(1, 0) == Mix(0, 0) || Mix(0, 1) == Mix(1, 0) {
		t.Error("Mix does not depend on both arguments")
	}
}

// fakeClock drives a limiter without sleeping: waiting advances the clock.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }
func (c *fakeClock) wait(_ context.Context, d time.Duration) error {
	c.t = c.t.Add(d)
	return nil
}

func TestRate(t *testing.T) {
	// 4000 records/s over 4 subtasks: 1000/s for this one, burst 10.
	r, err := Sequence(0, 1e9, WithRate(4000)).Open(t.Context(), connector.SubtaskInfo{Subtask: 2, Parallelism: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	lim := r.(*seqReader).lim
	clock := &fakeClock{t: time.Unix(1000, 0)}
	lim.now, lim.wait, lim.last = clock.now, clock.wait, clock.t
	buf := make([]int64, 1024)
	read := func() int {
		n, err := r.Read(t.Context(), buf)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := read(); n != 1 {
		t.Fatalf("first Read = %d, want the 1 initial token", n)
	}
	if n := read(); n != 1 || clock.t.Sub(time.Unix(1000, 0)) != time.Millisecond {
		t.Fatalf("second Read = %d after waiting %v, want 1 after 1ms", n, clock.t.Sub(time.Unix(1000, 0)))
	}
	clock.t = clock.t.Add(time.Hour)
	if n := read(); n != 10 {
		t.Fatalf("after an idle hour Read = %d, want the burst of 10", n)
	}
	// Over one simulated second the subtask yields about 1000 records.
	start, total := clock.t, 0
	for clock.t.Sub(start) < time.Second {
		total += read()
	}
	if total < 995 || total > 1005 {
		t.Errorf("one second at 1000/s yielded %d records", total)
	}

	// A slow generator never blocks longer than about 10 ms.
	slow, _ := New(-1, func(i int64) int64 { return i }, WithRate(0.001)).Open(t.Context(), connector.SubtaskInfo{Parallelism: 1}, nil)
	lim = slow.(*reader[int64]).lim
	clock = &fakeClock{t: time.Unix(0, 0)}
	lim.now, lim.wait, lim.last = clock.now, clock.wait, clock.t
	slow.Read(t.Context(), buf) // the initial token
	if n, err := slow.Read(t.Context(), buf); n != 0 || err != nil || clock.t != time.Unix(0, 0).Add(maxWait) {
		t.Errorf("slow Read = %d, %v after %v; want 0, nil after %v", n, err, clock.t.Sub(time.Unix(0, 0)), maxWait)
	}
}

func TestRateCancel(t *testing.T) {
	r, err := Sequence(0, 10, WithRate(0.001)).Open(t.Context(), connector.SubtaskInfo{Parallelism: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]int64, 10)
	if n, err := r.Read(t.Context(), buf); n != 1 || err != nil {
		t.Fatalf("first Read = %d, %v", n, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if n, err := r.Read(ctx, buf); n != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("Read with a canceled context = %d, %v", n, err)
	}
}

func TestNoAllocs(t *testing.T) {
	ctx := context.Background()
	info := connector.SubtaskInfo{Parallelism: 1}
	gen, _ := New(-1, func(i int64) int64 { return i }).Open(ctx, info, nil)
	seq, _ := Sequence(0, math.MaxInt64).Open(ctx, info, nil)
	buf := make([]int64, 1024)
	for name, r := range map[string]connector.Reader[int64]{"New": gen, "Sequence": seq} {
		if a := testing.AllocsPerRun(100, func() { r.Read(ctx, buf) }); a != 0 {
			t.Errorf("%s: Read allocates %v times per call", name, a)
		}
	}
}

func BenchmarkRead1024(b *testing.B) {
	ctx := context.Background()
	info := connector.SubtaskInfo{Parallelism: 1}
	buf := make([]int64, 1024)
	b.Run("New", func(b *testing.B) {
		r, _ := New(-1, func(i int64) int64 { return i }).Open(ctx, info, nil)
		for b.Loop() {
			r.Read(ctx, buf)
		}
	})
	b.Run("Sequence", func(b *testing.B) {
		r, _ := Sequence(0, math.MaxInt64).Open(ctx, info, nil)
		for b.Loop() {
			r.Read(ctx, buf)
		}
	})
	b.Run("Mix", func(b *testing.B) {
		r, _ := New(-1, func(i int64) int64 { return int64(Mix(1, uint64(i)) % 1000) }).Open(ctx, info, nil)
		for b.Loop() {
			r.Read(ctx, buf)
		}
	})
}
