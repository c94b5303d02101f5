package exec

import (
	"context"
	"fmt"
	"github.com/weir-stream/weir/connector"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// appendInput returns n random +I rows, ascending in time by up to
// 1.5 s a row.
func appendInput(seed uint64, n int) []row.Row {
	rng := rand.New(rand.NewPCG(seed, 9))
	out := make([]row.Row, n)
	t := int64(1_000_000)
	for i := range out {
		t += rng.Int64N(1500)
		out[i] = randomRow(rng, 4, t)
	}
	return out
}

// refWindowsOf returns the windows a row at ts belongs to, by brute
// force, for the non-merging kinds.
func refWindowsOf(s WindowSpec, ts int64) [][2]int64 {
	size, step := s.Size.Milliseconds(), s.Step.Milliseconds()
	var ws [][2]int64
	switch s.Kind {
	case Tumble:
		ws = append(ws, [2]int64{ts - ts%size, ts - ts%size + size})
	case Hop:
		for start := ts - ts%step; start > ts-size; start -= step {
			ws = append(ws, [2]int64{start, start + size})
		}
	case Cumulate:
		start := ts - ts%size
		for end := start + step; end <= start+size; end += step {
			if ts < end {
				ws = append(ws, [2]int64{start, end})
			}
		}
	}
	return ws
}

// refSessions returns each row's session by brute force: rows of a key
// at most gap apart share one, which ends gap after its last row.
func refSessions(in []row.Row, keys []int, gap int64) map[int][2]int64 {
	byKey := map[string][]int{}
	for i, r := range in {
		k := string(row.Key(nil, r, keys))
		byKey[k] = append(byKey[k], i)
	}
	out := map[int][2]int64{}
	for _, idx := range byKey {
		slices.SortFunc(idx, func(a, b int) int { return int(in[a].V[cTime].I - in[b].V[cTime].I) })
		for i := 0; i < len(idx); {
			j := i + 1
			for j < len(idx) && in[idx[j]].V[cTime].I <= in[idx[j-1]].V[cTime].I+gap {
				j++
			}
			w := [2]int64{in[idx[i]].V[cTime].I, in[idx[j-1]].V[cTime].I + gap}
			for _, x := range idx[i:j] {
				out[x] = w
			}
			i = j
		}
	}
	return out
}

// refWindowTVF is the brute-force window table function: every row with
// each of its windows.
func refWindowTVF(in []row.Row, s WindowSpec) map[int][][2]int64 {
	out := map[int][][2]int64{}
	if s.Kind == Session {
		for i, w := range refSessions(in, s.Keys, s.Gap.Milliseconds()) {
			out[i] = [][2]int64{w}
		}
		return out
	}
	for i, r := range in {
		out[i] = refWindowsOf(s, r.V[cTime].I)
	}
	return out
}

// refWindowAggregate is the brute-force window aggregation, each row
// with its window_time (window_end - 1) appended.
func refWindowAggregate(t *testing.T, in []row.Row, s WindowSpec) []row.Row {
	type group struct {
		key  []row.Value
		w    [2]int64
		rows []row.Row
	}
	groups := map[string]*group{}
	for i, ws := range refWindowTVF(in, s) {
		r := in[i]
		for _, w := range ws {
			k := string(row.Key(nil, r, s.Keys)) + string(row.AppendValue(nil, row.BigInt(w[0]))) + string(row.AppendValue(nil, row.BigInt(w[1])))
			g := groups[k]
			if g == nil {
				g = &group{w: w}
				for _, c := range s.Keys {
					g.key = append(g.key, r.V[c])
				}
				groups[k] = g
			}
			g.rows = append(g.rows, r)
		}
	}
	var out []row.Row
	for _, g := range groups {
		vs := append(slices.Clone(g.key), row.Timestamp(g.w[0]), row.Timestamp(g.w[1]))
		for _, a := range s.Aggs {
			vs = append(vs, refAgg(t, a, g.rows))
		}
		out = append(out, row.Row{V: append(vs, row.Timestamp(g.w[1]-1))})
	}
	return out
}

// withTimestamp appends each row's record timestamp as a column.
func withTimestamp(s weir.Stream[row.Row]) weir.Stream[row.Row] {
	return weir.Process(KeyBy(s, nil), func() weir.KeyedProcessFunction[string, row.Row, row.Row] {
		return weir.ProcessFunc[string, row.Row, row.Row](func(ctx *weir.KeyedContext[string, row.Row], r row.Row) error {
			r = r.Clone()
			r.V = append(r.V, row.Timestamp(ctx.Timestamp()))
			ctx.Emit(r)
			return nil
		})
	})
}

var testWindows = []WindowSpec{
	{Kind: Tumble, Size: 10 * time.Second},
	{Kind: Hop, Size: 10 * time.Second, Step: 2 * time.Second},
	{Kind: Cumulate, Size: 12 * time.Second, Step: 3 * time.Second},
	{Kind: Session, Gap: 2 * time.Second},
}

// Every window kind, keyed and global, at parallelism 1 and 2, gives
// the brute-force rows with window_time as their timestamp.
func TestWindowAggregateMatchesBruteForce(t *testing.T) {
	in := appendInput(11, 700)
	for _, w := range testWindows {
		for _, keys := range [][]int{{cKey}, {cKey, cS}, nil} {
			s := w
			s.Time, s.Keys, s.Aggs = cTime, keys, testAggs
			want := texts(refWindowAggregate(t, in, s))
			for _, par := range []int{1, 2} {
				got := runRows(t, in, par, par, 0, func(in weir.Stream[row.Row]) weir.Stream[row.Row] {
					out, err := WindowAggregate(in, s)
					if err != nil {
						t.Fatal(err)
					}
					return withTimestamp(out)
				})
				sameLines(t, s.Kind.String(), texts(got), want)
			}
		}
	}
}

// The window table functions append every window of a row, and the
// rows come out with their own timestamps (TUMBLE, HOP, CUMULATE).
func TestWindowTVFMatchesBruteForce(t *testing.T) {
	in := appendInput(12, 500)
	for _, w := range testWindows {
		s := w
		s.Time, s.Keys = cTime, []int{cKey}
		var want []row.Row
		for i, ws := range refWindowTVF(in, s) {
			for _, x := range ws {
				r := in[i].Clone()
				ts := r.V[cTime].I
				if s.Kind == Session {
					ts = x[1] - 1
				}
				r.V = append(r.V, row.Timestamp(x[0]), row.Timestamp(x[1]), row.Timestamp(x[1]-1), row.Timestamp(ts))
				want = append(want, r)
			}
		}
		for _, par := range []int{1, 2} {
			got := runRows(t, in, par, par, 0, func(in weir.Stream[row.Row]) weir.Stream[row.Row] {
				out, err := WindowTVF(in, s)
				if err != nil {
					t.Fatal(err)
				}
				return withTimestamp(out)
			})
			sameLines(t, s.Kind.String()+" TVF", texts(got), texts(want))
		}
	}
}

// Rows a gap apart exactly are one session, as in Flink, whose time
// windows intersect when one ends where the other starts.
func TestSessionsJoinRowsExactlyAGapApart(t *testing.T) {
	mk := func(ts int64) row.Row {
		return row.New(row.Int(1), row.Null(), row.Null(), row.Null(), row.Null(), row.Null(), row.Timestamp(ts), row.Null())
	}
	in := []row.Row{mk(1000), mk(3000), mk(6000)}
	s := WindowSpec{Kind: Session, Gap: 2 * time.Second, Time: cTime, Keys: []int{cKey}, Aggs: []AggSpec{{Fn: "COUNT", Arg: -1, Filter: -1}}}
	got := texts(runRows(t, in, 1, 1, 0, func(in weir.Stream[row.Row]) weir.Stream[row.Row] {
		out, err := WindowAggregate(in, s)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}))
	sameLines(t, "sessions", got, texts(refWindowAggregateNoTime(t, in, s)))
}

func refWindowAggregateNoTime(t *testing.T, in []row.Row, s WindowSpec) []row.Row {
	rows := refWindowAggregate(t, in, s)
	for i := range rows {
		rows[i].V = rows[i].V[:len(rows[i].V)-1]
	}
	return rows
}

// Specs the window operators cannot run are refused with an error.
func TestWindowSpecsThatCannotRunAreRefused(t *testing.T) {
	in := weir.FromSource(weir.NewPipeline(), "rows", collection.Of[row.Row]())
	cases := []WindowSpec{
		{Kind: Tumble, Size: time.Second, Updating: true},
		{Kind: Session, Gap: time.Second, ProcTime: true},
		{Kind: Tumble},
		{Kind: Hop, Size: time.Second},
		{Kind: Cumulate, Size: 10 * time.Second, Step: 3 * time.Second},
		{Kind: Session},
		{Kind: Session, Gap: time.Second, Aggs: []AggSpec{{Fn: "FIRST_VALUE", Arg: 0, Filter: -1, In: types.IntType}}},
		{Kind: Tumble, Size: time.Second, Aggs: []AggSpec{{Fn: "SUM", Arg: 0, Filter: -1, In: types.VarcharType}}},
		{Kind: Tumble, Size: time.Second, Aggs: []AggSpec{{Fn: "NO_SUCH_AGG", Arg: 0, Filter: -1, In: types.IntType}}},
	}
	for _, s := range cases {
		if _, err := WindowAggregate(in, s); err == nil {
			t.Errorf("%+v was accepted", s)
		}
	}
}

// Over processing time, every row lands in one TUMBLE window of its
// key: the counts of a key's windows add up to its rows, and the
// windows are aligned to their size. The source stays open after its
// rows (processing-time windows of a finished input never fire), and
// the run ends when the counts add up.
func TestProcessingTimeTumbleCountsEveryRowOnce(t *testing.T) {
	in := appendInput(31, 2000)
	want := map[int64]int64{}
	for _, r := range in {
		want[r.V[cKey].I]++
	}
	s := WindowSpec{Kind: Tumble, Size: 50 * time.Millisecond, ProcTime: true, Time: cTime, Keys: []int{cKey},
		Aggs: []AggSpec{{Fn: "COUNT", Arg: -1, Filter: -1}}}
	for _, par := range []int{1, 2} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		sink := &countingSink{total: int64(len(in)), done: cancel, got: map[int64]int64{}}
		p := weir.NewPipeline(weir.WithParallelism(par))
		src := weir.FromSource(p, "rows", openSource[row.Row]{items: in})
		out, err := WindowAggregate(src, s)
		if err != nil {
			t.Fatal(err)
		}
		weir.To(out, "out", sink)
		err = p.Run(ctx)
		cancel()
		if sink.err != nil {
			t.Fatal(sink.err)
		}
		if fmt.Sprint(sink.got) != fmt.Sprint(want) {
			t.Fatalf("parallelism %d: counts per key %v, want %v (run: %v)", par, sink.got, want, err)
		}
	}
}

// openSource yields its items, split among subtasks as collection.Of
// does, and then stays open with nothing more to read.
type openSource[T any] struct{ items []T }

func (s openSource[T]) Open(_ context.Context, info connector.SubtaskInfo, _ connector.Position) (connector.Reader[T], error) {
	var mine []T
	for i := info.Subtask; i < len(s.items); i += info.Parallelism {
		mine = append(mine, s.items[i])
	}
	return &openReader[T]{items: mine}, nil
}

type openReader[T any] struct{ items []T }

func (r *openReader[T]) Read(ctx context.Context, buf []T) (int, error) {
	if len(r.items) == 0 {
		select { // nothing more: wait as an idle unbounded reader does
		case <-ctx.Done():
		case <-time.After(5 * time.Millisecond):
		}
		return 0, nil
	}
	n := copy(buf, r.items)
	r.items = r.items[n:]
	return n, nil
}

func (r *openReader[T]) Position() connector.Position { return nil }
func (r *openReader[T]) Close() error                 { return nil }

// countingSink adds up the COUNT column of window rows per key, checks
// their windows, and calls done when the counts reach total.
type countingSink struct {
	mu    sync.Mutex
	total int64
	sum   int64
	got   map[int64]int64
	err   error
	done  func()
}

func (s *countingSink) Open(context.Context, connector.SubtaskInfo) (connector.Writer[row.Row], error) {
	return s, nil
}

func (s *countingSink) Write(_ context.Context, rows []row.Row) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rows {
		if start, end := r.V[1].I, r.V[2].I; start%50 != 0 || end-start != 50 {
			s.err = fmt.Errorf("window [%d, %d) is not a 50 ms tumbling window", start, end)
		}
		s.got[r.V[0].I] += r.V[3].I
		s.sum += r.V[3].I
	}
	if s.sum >= s.total {
		s.done()
	}
	return nil
}

func (s *countingSink) Flush(context.Context) error { return nil }
func (s *countingSink) Close() error                { return nil }
