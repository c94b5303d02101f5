package weir_test

import (
	"fmt"
	"slices"
	"time"

	"github.com/weir-stream/weir"
)

// The jobs of the rescale oracle (rescale_oracle_test.go). Each keeps
// keyed state across the cut and writes strings that depend only on the
// input's event times: a record is never late (every source subtask
// reads in event-time order), windows and timers see exactly the records
// of their time, and functions that fire timers summarize only records
// at or before the timer.

// side splits the input into two streams for the joins: records of
// even runs of seven go left, of odd runs right, so every key has both.
func side(e oev) int64 { return (e.I / 7) % 2 }

func sides(in weir.Stream[oev]) (weir.KeyedStream[int64, oev], weir.KeyedStream[int64, oev]) {
	left := weir.Filter(in, func(e oev) bool { return side(e) == 0 }, weir.Name("left"))
	right := weir.Filter(in, func(e oev) bool { return side(e) == 1 }, weir.Name("right"))
	return weir.KeyBy(left, oevKey), weir.KeyBy(right, oevKey)
}

func pair(a, b oev) string { return fmt.Sprintf("%d: %d+%d", a.Key, a.I, b.I) }

// delivered is a record of an at-least-once input: record i of the
// oracle's input is a copy of id (i/300)*100 + i%100, so every id comes
// three times, 100 records apart (at most 260ms of event time); ids
// whose first copy lies before a cut have their later copies after it.
type delivered struct{ ID, Time int64 }

// dedupJob forwards each id once: the ids remembered before the cut
// must stay remembered after it, in the subtask that owns their key
// group now. Tiny filters make most lookups reach the exact state.
func dedupJob(in weir.Stream[oev]) weir.Stream[string] {
	copies := weir.Map(in, func(e oev) delivered { return delivered{ID: (e.I/300)*100 + e.I%100, Time: e.Time} })
	unique := weir.DeduplicateBy(copies, func(d delivered) int64 { return d.ID }, 500*time.Millisecond,
		weir.Name("dedup"), weir.DedupExpectedIDs(16))
	return weir.Map(unique, func(d delivered) string { return fmt.Sprint(d.ID) })
}

// windowJoinJob joins both sides per key and 50ms window.
func windowJoinJob(in weir.Stream[oev]) weir.Stream[string] {
	left, right := sides(in)
	return weir.WindowJoin(left, right, weir.Tumbling(50*time.Millisecond), pair, weir.Name("window join"))
}

// intervalJoinJob pairs a left record at t with the right records of its
// key in [t-15ms, t+15ms].
func intervalJoinJob(in weir.Stream[oev]) weir.Stream[string] {
	left, right := sides(in)
	return weir.IntervalJoin(left, right, -15*time.Millisecond, 15*time.Millisecond, pair, weir.Name("interval join"))
}

// timerDelay is how long after a record its event-time timer fires, and
// the span of records a firing summarizes.
const timerDelay = 20

// windowSums keeps each key's values by event time (map state) and how
// many timers fired for the key (value state). A record registers a
// timer timerDelay after it; a timer at t emits the key's count and sum
// of values in [t-timerDelay, t] and forgets older values.
type windowSums struct {
	vals  *weir.MapState[int64, int64, int64]
	fired *weir.ValueState[int64, int64]
}

func (f *windowSums) Open(sc *weir.StateContext[int64]) error {
	f.vals = weir.NewMapState[int64, int64](sc, "vals")
	f.fired = weir.NewValueState[int64](sc, "fired")
	return nil
}

func (f *windowSums) ProcessElement(ctx *weir.KeyedContext[int64, string], e oev) error {
	v, _ := f.vals.Get(e.Time)
	f.vals.Put(e.Time, v+e.Val)
	ctx.RegisterEventTimer(e.Time + timerDelay)
	return nil
}

func (f *windowSums) OnTimer(ctx *weir.KeyedContext[int64, string], t int64, _ weir.TimeDomain) error {
	n, _ := f.fired.Value()
	f.fired.Update(n + 1)
	var count, sum int64
	var old []int64
	f.vals.All(func(ts, v int64) bool {
		switch {
		case ts < t-timerDelay:
			old = append(old, ts)
		case ts <= t:
			count, sum = count+1, sum+v
		}
		return true
	})
	for _, ts := range old {
		f.vals.Delete(ts)
	}
	ctx.Emit(fmt.Sprintf("%d@%d: timer %d, %d values sum %d", ctx.Key(), t, n+1, count, sum))
	return nil
}

// timersJob runs windowSums per key.
func timersJob(in weir.Stream[oev]) weir.Stream[string] {
	return weir.Process(weir.KeyBy(in, oevKey), func() weir.KeyedProcessFunction[int64, oev, string] { return &windowSums{} },
		weir.Name("timers"))
}

// coSums keeps the left records' values by event time (map state) and
// the right records (list state) of each key. Every record registers a
// timer timerDelay after it; a timer at t emits, for [t-timerDelay, t],
// the sum of left values and the count of right records, and forgets
// older ones.
type coSums struct {
	left  *weir.MapState[int64, int64, int64]
	right *weir.ListState[oev, int64]
}

func (f *coSums) Open(sc *weir.StateContext[int64]) error {
	f.left = weir.NewMapState[int64, int64](sc, "left")
	f.right = weir.NewListState[oev](sc, "right")
	return nil
}

func (f *coSums) ProcessElement1(ctx *weir.KeyedContext[int64, string], e oev) error {
	f.left.Put(e.Time, e.Val)
	ctx.RegisterEventTimer(e.Time + timerDelay)
	return nil
}

func (f *coSums) ProcessElement2(ctx *weir.KeyedContext[int64, string], e oev) error {
	f.right.Add(e)
	ctx.RegisterEventTimer(e.Time + timerDelay)
	return nil
}

func (f *coSums) OnTimer(ctx *weir.KeyedContext[int64, string], t int64, _ weir.TimeDomain) error {
	var sum int64
	var old []int64
	f.left.All(func(ts, v int64) bool {
		switch {
		case ts < t-timerDelay:
			old = append(old, ts)
		case ts <= t:
			sum += v
		}
		return true
	})
	for _, ts := range old {
		f.left.Delete(ts)
	}
	var keep []oev
	count := 0
	for _, e := range f.right.Get() {
		if e.Time >= t-timerDelay {
			keep = append(keep, e)
			if e.Time <= t {
				count++
			}
		}
	}
	f.right.Update(keep)
	ctx.Emit(fmt.Sprintf("%d@%d: left sum %d, %d right", ctx.Key(), t, sum, count))
	return nil
}

// coProcessJob runs coSums on both sides.
func coProcessJob(in weir.Stream[oev]) weir.Stream[string] {
	left, right := sides(in)
	return weir.CoProcess(left, right, func() weir.CoProcessFunction[int64, oev, oev, string] { return &coSums{} },
		weir.Name("co-process"))
}

// sessionAcc counts a session's records and sums their values.
type sessionAcc struct{ N, Sum int64 }

// sessionJob aggregates and processes session windows with a gap of
// 10ms: a key's records lie 7ms apart within a run of a hundred and 37ms
// apart across, so a key has one session per run; under rescaling a
// session's records reach the window from several source subtasks and
// the sessions merge.
func sessionJob(in weir.Stream[oev]) weir.Stream[string] {
	w := weir.WindowBy(weir.KeyBy(in, oevKey), weir.Session(10*time.Millisecond))
	agg := weir.AggregateWindow(w, weir.AggregatorFuncs(
		func() sessionAcc { return sessionAcc{} },
		func(a sessionAcc, e oev) sessionAcc { return sessionAcc{a.N + 1, a.Sum + e.Val} },
		func(a, b sessionAcc) sessionAcc { return sessionAcc{a.N + b.N, a.Sum + b.Sum} },
		func(a sessionAcc) string { return fmt.Sprintf("%d records sum %d", a.N, a.Sum) }), weir.Name("session aggregate"))
	aggregated := weir.Map(agg, func(r weir.Windowed[int64, string]) string {
		return fmt.Sprintf("aggregate %d [%d,%d): %s", r.Key, r.Window.Start, r.Window.End, r.Value)
	})
	processed := weir.ProcessWindow(w, func(k int64, win weir.Window, recs []oev, emit func(string)) error {
		is := make([]int64, len(recs))
		for i, e := range recs {
			is[i] = e.I
		}
		slices.Sort(is)
		emit(fmt.Sprintf("process %d [%d,%d): %d records from %d to %d", k, win.Start, win.End, len(is), is[0], is[len(is)-1]))
		return nil
	}, weir.Name("session process"))
	return weir.Union(aggregated, processed)
}

// assignedJob assigns the records' event times again after the source
// (AssignTimestamps), counts them per key in 20ms windows with a window
// function that sends the windows of odd keys to a side output, and
// splits the records by key parity with ProcessStream's side output: the
// watermark generator's state and the side outputs cross the cut.
func assignedJob(in weir.Stream[oev]) weir.Stream[string] {
	stamped := weir.AssignTimestamps(in, oevTime, 5*time.Millisecond, weir.Name("assign timestamps"))
	odd := weir.NewOutputTag[string]("odd")
	w := weir.WindowBy(weir.KeyBy(stamped, oevKey), weir.Tumbling(20*time.Millisecond))
	counts := weir.ProcessWindowWithContext(w, func(ctx *weir.WindowContext[int64, string], recs []oev) error {
		s := fmt.Sprintf("%d [%d,%d): %d", ctx.Key(), ctx.Window().Start, ctx.Window().End, len(recs))
		if ctx.Key()%2 == 1 {
			weir.Output(ctx, odd, "odd window "+s)
			return nil
		}
		ctx.Emit("window " + s)
		return nil
	}, weir.Name("window with side output"))
	big := weir.NewOutputTag[string]("big")
	split := weir.ProcessStream(stamped, func(ctx *weir.RecordContext[string], e oev) error {
		if e.Val%3 == 0 {
			weir.Output(ctx, big, fmt.Sprintf("third %d at %d", e.I, ctx.Timestamp()))
		}
		return nil
	}, weir.Name("split"))
	return weir.Union(counts, weir.SideOutputOf(counts, odd), weir.SideOutputOf(split, big))
}
