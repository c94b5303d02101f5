package tables

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
	"github.com/weir-stream/weir/nexmark"
)

// nexmarkTable is the table of the Flink nexmark DDL (ddl_gen.sql), with
// its computed dateTime column.
func nexmarkTable(opts map[string]string) Table {
	ts := types.TimestampType
	col := func(t types.Type, path ...string) Column { return Column{Path: path, Type: t} }
	cols := []Column{col(types.IntType, "event_type")}
	for _, f := range []struct {
		name string
		t    types.Type
	}{{"id", types.BigIntType}, {"name", types.VarcharType}, {"emailAddress", types.VarcharType},
		{"creditCard", types.VarcharType}, {"city", types.VarcharType}, {"state", types.VarcharType},
		{"dateTime", ts}, {"extra", types.VarcharType}} {
		cols = append(cols, col(f.t, "person", f.name))
	}
	for _, f := range []struct {
		name string
		t    types.Type
	}{{"id", types.BigIntType}, {"itemName", types.VarcharType}, {"description", types.VarcharType},
		{"initialBid", types.BigIntType}, {"reserve", types.BigIntType}, {"dateTime", ts}, {"expires", ts},
		{"seller", types.BigIntType}, {"category", types.BigIntType}, {"extra", types.VarcharType}} {
		cols = append(cols, col(f.t, "auction", f.name))
	}
	for _, f := range []struct {
		name string
		t    types.Type
	}{{"auction", types.BigIntType}, {"bidder", types.BigIntType}, {"price", types.BigIntType},
		{"channel", types.VarcharType}, {"url", types.VarcharType}, {"dateTime", ts}, {"extra", types.VarcharType}} {
		cols = append(cols, col(f.t, "bid", f.name))
	}
	cols = append(cols, Column{Path: []string{"dateTime"}, Type: ts, Virtual: true})
	o := map[string]string{"connector": "nexmark"}
	for k, v := range opts {
		o[k] = v
	}
	return Table{Name: "datagen", Columns: cols, Options: o}
}

// colsNamed returns the indexes of the named columns of t.
func colsNamed(t *testing.T, tb Table, names ...string) []int {
	t.Helper()
	var out []int
	for _, n := range names {
		i := -1
		for k, c := range tb.Columns {
			if strings.EqualFold(c.Name(), n) {
				i = k
			}
		}
		if i < 0 {
			t.Fatalf("no column %s", n)
		}
		out = append(out, i)
	}
	return out
}

// readAll reads every record of a bounded source, subtask by subtask.
func readAll[T any](t *testing.T, src connector.Source[T], parallelism int) []T {
	t.Helper()
	ctx := context.Background()
	var out []T
	for s := range parallelism {
		r, err := src.Open(ctx, connector.SubtaskInfo{Subtask: s, Parallelism: parallelism}, nil)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]T, 7)
		for {
			n, err := r.Read(ctx, buf)
			out = append(out, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		r.Close()
	}
	return out
}

func TestNexmarkSourceGivesTheRequestedColumnsOfEachEvent(t *testing.T) {
	tb := nexmarkTable(map[string]string{"events.num": "500", "generators": "3", "first-event.rate": "1000", "next-event.rate": "1000"})
	cols := colsNamed(t, tb, "bid.price", "event_type", "PERSON.NAME", "auction.expires", "bid.dateTime")
	src, err := NewSource(tb, cols)
	if err != nil {
		t.Fatal(err)
	}
	if !src.Bounded {
		t.Fatal("a source of 500 events is not bounded")
	}
	cfg := nexmark.DefaultConfig()
	cfg.NumEvents, cfg.NumEventGenerators, cfg.FirstEventRate, cfg.NextEventRate = 500, 3, 1000, 1000
	events, err := nexmark.Source(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := readAll(t, events, 2)
	got := readAll(t, src.Source, 2)
	if len(got) != len(want) || len(got) != 500 {
		t.Fatalf("got %d rows, want %d", len(got), len(want))
	}
	for i, e := range want {
		w := []row.Value{row.Null(), row.Int(int32(e.Kind)), row.Null(), row.Null(), row.Null()}
		switch e.Kind {
		case nexmark.BidEvent:
			w[0], w[4] = row.BigInt(e.Bid.Price), row.Timestamp(e.Bid.DateTime)
		case nexmark.PersonEvent:
			w[2] = row.String(e.Person.Name)
		case nexmark.AuctionEvent:
			w[3] = row.Timestamp(e.Auction.Expires)
		}
		if got[i].Op != row.Insert || !row.EqualValues(got[i], row.Row{V: w}) {
			t.Fatalf("row %d = %v %v, want %v", i, got[i].Op, got[i].V, w)
		}
	}
}

func TestNexmarkSourceWithNoEventsOptionIsUnbounded(t *testing.T) {
	src, err := NewSource(nexmarkTable(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if src.Bounded {
		t.Fatal("bounded")
	}
}

func TestNexmarkSourceRejectsWhatItCannotServe(t *testing.T) {
	tb := nexmarkTable(nil)
	for _, c := range []struct {
		name string
		tb   Table
		cols []string
		want error
		says string
	}{
		{"unknown option", nexmarkTable(map[string]string{"event.num": "5"}), nil, ErrOption, `"event.num"`},
		{"bad value", nexmarkTable(map[string]string{"events.num": "many"}), nil, ErrOption, `"events.num" = "many"`},
		{"zero rate", nexmarkTable(map[string]string{"first-event.rate": "0"}), nil, ErrOption, `first-event.rate`},
		{"proportions too large", nexmarkTable(map[string]string{"person.proportion": "2000000000", "auction.proportion": "2000000000"}), nil, ErrOption, "proportions"},
		{"computed column", tb, []string{"dateTime"}, ErrColumn, "dateTime"},
		{"unknown field", withColumn(tb, Column{Path: []string{"bid", "size"}, Type: types.BigIntType}), []string{"bid.size"}, ErrColumn, "bid.size"},
		{"unknown field not read", withColumn(tb, Column{Path: []string{"bid", "price2"}, Type: types.IntType}), nil, nil, ""},
		{"metadata", withColumn(tb, Column{Path: []string{"ts"}, Type: types.TimestampType, Metadata: "timestamp"}), []string{"ts"}, ErrColumn, `"timestamp"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var cols []int
			if c.cols != nil {
				cols = colsNamed(t, c.tb, c.cols...)
			}
			_, err := NewSource(c.tb, cols)
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "datagen") {
				t.Fatalf("error %v, want %v naming %s and the table", err, c.want, c.says)
			}
		})
	}
	wrong := withColumn(tb, Column{Path: []string{"bid", "price"}, Type: types.IntType})
	_, err := NewSource(wrong, []int{len(wrong.Columns) - 1})
	if !errors.Is(err, ErrColumn) || !strings.Contains(err.Error(), "BIGINT") {
		t.Fatalf("an INT column for bid.price: %v", err)
	}
}

func withColumn(tb Table, c Column) Table {
	tb.Columns = append(append([]Column(nil), tb.Columns...), c)
	return tb
}

func TestUnknownOrMissingConnectorListsTheKnownOnes(t *testing.T) {
	_, err := NewSource(Table{Name: "t", Options: map[string]string{"connector": "datagen"}}, nil)
	if !errors.Is(err, ErrUnknownConnector) || !strings.Contains(err.Error(), "nexmark") || !strings.Contains(err.Error(), `"datagen"`) {
		t.Fatalf("unknown connector: %v", err)
	}
	_, err = NewSink(Table{Name: "t"}, false)
	if !errors.Is(err, ErrUnknownConnector) || !strings.Contains(err.Error(), "nexmark") {
		t.Fatalf("no connector: %v", err)
	}
}

func TestNexmarkIsSourceOnly(t *testing.T) {
	if _, err := NewSink(nexmarkTable(nil), false); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("got %v", err)
	}
}

// BenchmarkNexmarkSource reads q1's columns (bid.auction, bid.price,
// bid.bidder, bid.dateTime, event_type) of unbounded events.
func BenchmarkNexmarkSource(b *testing.B) {
	tb := nexmarkTable(nil)
	var cols []int
	for i, c := range tb.Columns {
		switch c.Name() {
		case "event_type", "bid.auction", "bid.price", "bid.bidder", "bid.dateTime":
			cols = append(cols, i)
		}
	}
	src, err := NewSource(tb, cols)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	r, err := src.Source.Open(ctx, connector.SubtaskInfo{Parallelism: 1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]row.Row, 256)
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; {
		k, err := r.Read(ctx, buf[:min(len(buf), b.N-n)])
		if err != nil {
			b.Fatal(err)
		}
		n += k
	}
}

// The nexmark table's source keeps the abilities of package nexmark's:
// it rewinds deterministically and moves to another parallelism.
func TestNexmarkSourceIsDeterministicAndRescales(t *testing.T) {
	src, err := NewSource(nexmarkTable(map[string]string{"events.num": "100", "generators": "4"}), []int{0})
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := src.Source.(connector.Deterministic); !ok || !d.Deterministic() {
		t.Fatal("not deterministic")
	}
	r, ok := src.Source.(connector.Rescaler)
	if !ok {
		t.Fatal("not a Rescaler")
	}
	pos, err := r.Rescale([]connector.Position{nil, nil}, 3)
	if err != nil || len(pos) != 3 {
		t.Fatalf("rescale: %v, %v", pos, err)
	}
}

func TestNexmarkSourceNarrowedToEventTypesSkipsTheOtherEvents(t *testing.T) {
	tb := nexmarkTable(map[string]string{"events.num": "2000", "generators": "3"})
	cols := colsNamed(t, tb, "bid.price", "event_type", "person.name")
	all, err := NewSource(tb, cols)
	if err != nil {
		t.Fatal(err)
	}
	var want []row.Row
	for _, r := range readAll(t, all.Source, 2) {
		if k := r.V[1].I; k == int64(nexmark.PersonEvent) || k == int64(nexmark.BidEvent) {
			want = append(want, r)
		}
	}
	narrowed, err := NewSourceWhere(tb, cols, Where{Col: 1, In: []row.Value{row.Int(int32(nexmark.PersonEvent)), row.Int(int32(nexmark.BidEvent))}})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, narrowed.Source, 2)
	if len(got) != len(want) || len(got) == 0 || len(got) == 2000 {
		t.Fatalf("got %d rows, want the %d persons and bids of 2000 events", len(got), len(want))
	}
	for i := range want {
		if !row.EqualValues(got[i], want[i]) {
			t.Fatalf("row %d = %v, want %v", i, got[i].V, want[i].V)
		}
	}
	// A Where on another column narrows nothing: the reader filters.
	other, err := NewSourceWhere(tb, cols, Where{Col: 0, In: []row.Value{row.BigInt(1)}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(readAll(t, other.Source, 1)); n != 2000 {
		t.Fatalf("a Where on bid.price left %d of 2000 rows", n)
	}
	// Narrows says which: the planner then reads event_type as a constant.
	if !Narrows(tb, cols[1]) || Narrows(tb, cols[0]) {
		t.Errorf("Narrows: event_type %v, bid.price %v; want true, false", Narrows(tb, cols[1]), Narrows(tb, cols[0]))
	}
	if printed := (Table{Name: "p", Options: map[string]string{"connector": "print"}, Columns: tb.Columns}); Narrows(printed, cols[1]) {
		t.Error("Narrows is true for a connector that does not narrow")
	}
}
