package queries

import (
	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/nexmark"
)

// Q3Row is a row of q3, local item suggestion: who sells in category 10 in
// Oregon, Idaho or California, and which auctions.
//
//	SELECT P.name, P.city, P.state, A.id
//	FROM auction AS A INNER JOIN person AS P on A.seller = P.id
//	WHERE A.category = 10 and (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA');
//
// The join is a regular (unwindowed) inner join of two append-only inputs,
// so the result is append-only: both sides are kept per person id, and a
// row is emitted when the second record of a matching pair arrives. Like
// Flink's, its state grows with the input (only the filtered records are
// kept).
type Q3Row struct {
	Name  string `json:"name"`
	City  string `json:"city"`
	State string `json:"state"`
	ID    int64  `json:"id"`
}

// q3Person is the part of a person q3 keeps.
type q3Person struct {
	ID                int64
	Name, City, State string
}

// q3Auction is the part of an auction q3 keeps.
type q3Auction struct {
	ID, Seller int64
}

func q3State(s string) bool { return s == "OR" || s == "ID" || s == "CA" }

// q3Input is a person (Person set) or an auction for q3's join, keyed by
// person id: the person's id, the auction's seller.
type q3Input struct {
	Key      int64
	IsPerson bool
	Auction  q3Auction
	Person   q3Person
}

func init() {
	Register(Query{Name: "q3", Description: "local item suggestion: sellers in OR, ID or CA of auctions in category 10 (person-auction join)", Build: func(in weir.Stream[nexmark.Event], out Output) {
		// One projection of both sides, chained to the source, and one
		// exchange: two FlatMaps on the source would each be fed the
		// whole encoded event (the planner chains only linear paths).
		inputs := weir.FlatMap(in, func(e nexmark.Event, emit func(q3Input)) {
			switch {
			case e.Kind == nexmark.PersonEvent && q3State(e.Person.State):
				emit(q3Input{Key: e.Person.ID, IsPerson: true, Person: q3Person{e.Person.ID, e.Person.Name, e.Person.City, e.Person.State}})
			case e.Kind == nexmark.AuctionEvent && e.Auction.Category == 10:
				emit(q3Input{Key: e.Auction.Seller, Auction: q3Auction{e.Auction.ID, e.Auction.Seller}})
			}
		}, weir.Name("q3-persons-auctions"))
		rows := weir.Process(weir.KeyBy(inputs, func(i q3Input) int64 { return i.Key }),
			func() weir.KeyedProcessFunction[int64, q3Input, Q3Row] { return &q3Join{} },
			weir.Name("q3-join"))
		Emit(rows, out)
	}})
}

// q3Join is a regular inner join keyed by person id (= seller).
type q3Join struct {
	auctions *weir.ListState[q3Auction, int64]
	persons  *weir.ListState[q3Person, int64]
}

func (j *q3Join) Open(sc *weir.StateContext[int64]) error {
	j.auctions = weir.NewListState[q3Auction](sc, "auctions")
	j.persons = weir.NewListState[q3Person](sc, "persons")
	return nil
}

func (j *q3Join) ProcessElement(ctx *weir.KeyedContext[int64, Q3Row], in q3Input) error {
	if in.IsPerson {
		p := in.Person
		for _, a := range j.auctions.Get() {
			ctx.Emit(Q3Row{p.Name, p.City, p.State, a.ID})
		}
		j.persons.Add(p)
		return nil
	}
	a := in.Auction
	for _, p := range j.persons.Get() {
		ctx.Emit(Q3Row{p.Name, p.City, p.State, a.ID})
	}
	j.auctions.Add(a)
	return nil
}
