package queries

import (
	"slices"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/nexmark"
)

// Q8Row is a row of q8, monitor new users: people who registered and
// opened an auction in the same 10-second tumbling window.
//
//	SELECT P.id, P.name, P.starttime
//	FROM (SELECT id, name, window_start AS starttime, window_end AS endtime
//	      FROM TABLE(TUMBLE(TABLE person, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
//	      GROUP BY id, name, window_start, window_end) P
//	JOIN (SELECT seller, window_start AS starttime, window_end AS endtime
//	      FROM TABLE(TUMBLE(TABLE auction, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
//	      GROUP BY seller, window_start, window_end) A
//	ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime;
//
// The columns are named as the SQL's sink table (id, name, stime); stime is
// the window start in epoch ms. Both sides are grouped, so a person gives
// one row per window however many auctions they opened in it. The result
// is append-only: a window's rows are written once the watermark passes
// its end.
type Q8Row struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	STime int64  `json:"stime"`
}

// q8Event is a person (ID, Name) or an auction by seller ID.
type q8Event struct {
	ID      int64
	Name    string
	Auction bool
}

// q8Acc is what a window holds for a person id: the distinct names
// registered with it, and whether it opened an auction.
type q8Acc struct {
	Names   []string
	Auction bool
}

type q8Group struct{}

func (q8Group) Create() q8Acc { return q8Acc{} }

func (q8Group) Add(a q8Acc, e q8Event) q8Acc {
	switch {
	case e.Auction:
		a.Auction = true
	case !slices.Contains(a.Names, e.Name):
		a.Names = append(a.Names, e.Name)
	}
	return a
}

func (q8Group) Merge(a, b q8Acc) q8Acc {
	out := q8Acc{Names: slices.Clone(a.Names), Auction: a.Auction || b.Auction}
	for _, n := range b.Names {
		if !slices.Contains(out.Names, n) {
			out.Names = append(out.Names, n)
		}
	}
	return out
}

func (q8Group) Result(a q8Acc) q8Acc { return a }

func init() {
	Register(Query{Name: "q8", Description: "monitor new users: people who registered and opened an auction in the same 10 s window", Build: func(in weir.Stream[nexmark.Event], out Output) {
		events := weir.FlatMap(in, func(e nexmark.Event, emit func(q8Event)) {
			switch e.Kind {
			case nexmark.PersonEvent:
				emit(q8Event{ID: e.Person.ID, Name: e.Person.Name})
			case nexmark.AuctionEvent:
				emit(q8Event{ID: e.Auction.Seller, Auction: true})
			}
		}, weir.Name("q8-people-sellers"))
		groups := weir.AggregateWindow(
			weir.WindowBy(weir.KeyBy(events, func(e q8Event) int64 { return e.ID }), weir.Tumbling(Seconds(10))),
			weir.Aggregator[q8Event, q8Acc, q8Acc](q8Group{}), weir.Name("q8-join"))
		rows := weir.FlatMap(groups, func(g weir.Windowed[int64, q8Acc], emit func(Q8Row)) {
			if g.Value.Auction {
				for _, n := range g.Value.Names {
					emit(Q8Row{g.Key, n, g.Window.Start})
				}
			}
		}, weir.Name("q8"))
		Emit(rows, out)
	}})
}
