package exec

import (
	"context"
	"slices"
	"testing"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/internal/sql/row"
)

// An upsert stream becomes a changelog that retracts what each row
// replaces: a repeated value emits nothing, a delete carries the row
// kept, and a delete of an unknown key nothing.
func TestNormalizeTurnsUpsertsIntoAChangelog(t *testing.T) {
	up := func(op row.Op, k int64, v string) row.Row {
		return row.Row{Op: op, V: []row.Value{row.BigInt(k), row.String(v)}}
	}
	in := []row.Row{
		up(row.UpdateAfter, 1, "a"), up(row.UpdateAfter, 1, "b"), up(row.UpdateAfter, 1, "b"),
		{Op: row.Delete, V: []row.Value{row.BigInt(1), row.Null()}}, {Op: row.Delete, V: []row.Value{row.BigInt(2), row.Null()}},
		up(row.UpdateAfter, 2, "c"),
	}
	p := weir.NewPipeline(weir.WithParallelism(1))
	sink := collection.NewSink[row.Row]()
	weir.To(Normalize(weir.FromSource(p, "upserts", collection.Of(in...)), []int{0}, 0, "normalize"), "out", sink)
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := sink.Records()
	want := []row.Row{up(row.Insert, 1, "a"), up(row.UpdateBefore, 1, "a"), up(row.UpdateAfter, 1, "b"), up(row.Delete, 1, "b"), up(row.Insert, 2, "c")}
	if !slices.EqualFunc(got, want, func(a, b row.Row) bool { return a.Op == b.Op && row.EqualValues(a, b) }) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
