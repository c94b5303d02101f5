package queries

import (
	"cmp"
	"slices"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/nexmark"
)

// Q11Row is a bidder's session: the number of bids the bidder made in a
// session of activity, with the session's bounds. It implements
//
//	SELECT B.bidder, count(*) AS bid_count,
//	       SESSION_START(B.dateTime, INTERVAL '10' SECOND) AS starttime,
//	       SESSION_END(B.dateTime, INTERVAL '10' SECOND) AS endtime
//	FROM bid B
//	GROUP BY B.bidder, SESSION(B.dateTime, INTERVAL '10' SECOND)
//
// A session starts at its first bid and ends 10 s after its last; bids at
// most 10 s apart are in the same session (Flink's inclusive merge). A row
// is written once, when the watermark passes the session's end.
type Q11Row struct {
	Bidder    int64 `json:"bidder"`
	BidCount  int64 `json:"bid_count"`
	StartTime int64 `json:"starttime"`
	EndTime   int64 `json:"endtime"`
}

// bidsPerBidder counts each bidder's bids in the windows of a, as q11
// (sessions) and q12 (tumbling windows) do.
func bidsPerBidder(in weir.Stream[nexmark.Event], a weir.WindowAssigner, name string) weir.Stream[Q11Row] {
	bidders := weir.Map(Bids(in), func(b nexmark.Bid) int64 { return b.Bidder }, weir.Name(name+"-bidder"))
	counts := weir.AggregateWindow(weir.WindowBy(weir.KeyBy(bidders, func(b int64) int64 { return b }), a),
		weir.Count[int64](), weir.Name(name+"-windows"))
	return weir.Map(counts, func(w weir.Windowed[int64, int64]) Q11Row {
		return Q11Row{Bidder: w.Key, BidCount: w.Value, StartTime: w.Window.Start, EndTime: w.Window.End}
	}, weir.Name(name))
}

func init() {
	Register(Query{Name: "q11", Description: "user sessions: bids per bidder per session of activity (10 s gap)", Build: func(in weir.Stream[nexmark.Event], out Output) {
		bidders := weir.FlatMap(in, func(e nexmark.Event, emit func(q11Bid)) {
			if e.Kind == nexmark.BidEvent {
				emit(q11Bid{e.Bid.Bidder, e.Bid.DateTime})
			}
		}, weir.Name("q11-bidder"))
		Emit(weir.Process(weir.KeyBy(bidders, func(b q11Bid) int64 { return b.Bidder }),
			func() weir.KeyedProcessFunction[int64, q11Bid, Q11Row] { return &q11Sessions{} },
			weir.Name("q11")), out)
	}})
}

// q11Gap is q11's session gap in ms.
const q11Gap = 10_000

// q11Bid is the part of a bid q11 needs.
type q11Bid struct {
	Bidder, DateTime int64
}

// q11Session is a session of one bidder: its first and last bid's times
// and its number of bids. It ends at Last + q11Gap.
type q11Session struct {
	Start, Last, Count int64
}

// touches reports whether a bid at t joins s: bids at most q11Gap apart
// are in one session, in either direction.
func (s q11Session) touches(t int64) bool { return t <= s.Last+q11Gap && t >= s.Start-q11Gap }

// q11Sessions keeps each bidder's open sessions, keyed by bidder, and
// writes a session once the watermark has passed its end, when no bid that
// could extend it can come. A bidder's bids arrive in time order from each
// source subtask but interleaved across them, so a bid may also land
// before an open session, or between two that it then merges; the common
// case, a bid extending the one open session, touches only current.
//
// This is weir.Session(10 s) with a count, specialised: no per-window
// state entries and no timer per bid. A timer is set at a session's end
// when it opens; when it fires for a session that has been extended, it
// is set again at the new end.
type q11Sessions struct {
	current *weir.ValueState[q11Session, int64]
	// others holds further open sessions, rare: only while source
	// subtasks are skewed.
	others *weir.ValueState[[]q11Session, int64]
}

func (f *q11Sessions) Open(sc *weir.StateContext[int64]) error {
	f.current = weir.NewValueState[q11Session](sc, "current")
	f.others = weir.NewValueState[[]q11Session](sc, "others")
	return nil
}

func (f *q11Sessions) ProcessElement(ctx *weir.KeyedContext[int64, Q11Row], b q11Bid) error {
	t := b.DateTime
	cur, ok := f.current.Value()
	switch {
	case !ok:
		f.current.Update(q11Session{t, t, 1})
		ctx.RegisterEventTimer(t + q11Gap + 1)
		return nil
	case t >= cur.Start && t <= cur.Last+q11Gap:
		// The bid extends the latest session. It touches no other: those
		// end more than a gap before the latest starts, so others is not
		// read (most bids come in order).
		cur.Last, cur.Count = max(cur.Last, t), cur.Count+1
		f.current.Update(cur)
		return nil
	}
	others, _ := f.others.Value()
	switch {
	case len(others) == 0 && cur.touches(t):
		cur.Start, cur.Last, cur.Count = min(cur.Start, t), max(cur.Last, t), cur.Count+1
		f.current.Update(cur)
		return nil
	}
	// The general case: merge the bid's session with every open session
	// it connects, transitively.
	all := append(append(make([]q11Session, 0, len(others)+2), others...), cur, q11Session{t, t, 1})
	slices.SortFunc(all, func(a, b q11Session) int { return cmp.Compare(a.Start, b.Start) })
	merged := all[:1]
	for _, s := range all[1:] {
		m := &merged[len(merged)-1]
		if s.Start <= m.Last+q11Gap {
			m.Last, m.Count = max(m.Last, s.Last), m.Count+s.Count
			continue
		}
		merged = append(merged, s)
	}
	for _, s := range merged {
		ctx.RegisterEventTimer(s.Last + q11Gap + 1)
	}
	f.current.Update(merged[len(merged)-1])
	if len(merged) == 1 {
		f.others.Clear()
	} else {
		f.others.Update(merged[:len(merged)-1])
	}
	return nil
}

func (f *q11Sessions) OnTimer(ctx *weir.KeyedContext[int64, Q11Row], now int64, _ weir.TimeDomain) error {
	cur, ok := f.current.Value()
	if !ok {
		return nil
	}
	others, _ := f.others.Value()
	var open []q11Session
	for _, s := range append(append([]q11Session(nil), others...), cur) {
		end := s.Last + q11Gap
		if end < now {
			ctx.Emit(Q11Row{Bidder: ctx.Key(), BidCount: s.Count, StartTime: s.Start, EndTime: end})
			continue
		}
		ctx.RegisterEventTimer(end + 1)
		open = append(open, s)
	}
	switch len(open) {
	case 0:
		f.current.Clear()
		f.others.Clear()
	default:
		f.current.Update(open[len(open)-1])
		if len(open) == 1 {
			f.others.Clear()
		} else {
			f.others.Update(open[:len(open)-1])
		}
	}
	return nil
}
