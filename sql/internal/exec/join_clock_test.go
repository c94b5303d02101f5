package exec

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector/connectortest"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/internal/sql/row"
)

// runPacedJoin runs a regular join of one left row at 0 and one right row
// with its key at 20 minutes on a fake clock, with the state
// time-to-live ttl, and returns the output.
func runPacedJoin(t *testing.T, ttl time.Duration) []row.Row {
	var got []row.Row
	synctest.Test(t, func(t *testing.T) {
		p := weir.NewPipeline(weir.WithStallTimeout(0, nil))
		l := weir.FromSource(p, "l", connectortest.Paced([]connectortest.Timed[row.Row]{{At: 0, V: bigintRow(1, 10)}}))
		r := weir.FromSource(p, "r", connectortest.Paced([]connectortest.Timed[row.Row]{{At: 20 * time.Minute, V: bigintRow(1, 20)}}))
		sink := collection.NewSink[row.Row]()
		weir.To(RegularJoin(l, r, JoinSpec{Kind: InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0},
			LeftWidth: 2, RightWidth: 2, StateTTL: ttl}), "out", sink)
		if err := p.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		got = sink.Records()
	})
	return got
}

// A regular join with a state time-to-live forgets a row that long after
// it was written: a match arriving later joins nothing; one arriving
// within the time-to-live joins.
func TestRegularJoinForgetsRowsAfterTheStateTTL(t *testing.T) {
	if got := runPacedJoin(t, 10*time.Minute); len(got) != 0 {
		t.Fatalf("with a 10-minute time-to-live the join emitted %q", rowTexts(got))
	}
	got := runPacedJoin(t, time.Hour)
	if len(got) != 1 || rowText(got[0]) != "1 10 1 20" {
		t.Fatalf("with a 1-hour time-to-live the join emitted %q, want the pair", rowTexts(got))
	}
}

// A processing-time temporal join joins each probe row with the version
// of its key current when it arrives: none, the first, the updated one,
// none after the deletion (padded in a left join).
func TestTemporalProctimeJoinJoinsTheCurrentVersion(t *testing.T) {
	at := func(m int, r row.Row) connectortest.Timed[row.Row] {
		return connectortest.Timed[row.Row]{At: time.Duration(m) * time.Minute, V: r}
	}
	probes := []connectortest.Timed[row.Row]{at(0, bigintRow(1, 1)), at(2, bigintRow(1, 2)), at(4, bigintRow(1, 3)), at(6, bigintRow(1, 4))}
	versions := []connectortest.Timed[row.Row]{at(1, bigintRow(1, 100)),
		at(3, opRow(row.UpdateBefore, bigintRow(1, 100))), at(3, opRow(row.UpdateAfter, bigintRow(1, 200))),
		at(5, opRow(row.Delete, bigintRow(1, 200)))}
	var got []row.Row
	synctest.Test(t, func(t *testing.T) {
		p := weir.NewPipeline(weir.WithStallTimeout(0, nil))
		sink := collection.NewSink[row.Row]()
		weir.To(TemporalProctimeJoin(weir.FromSource(p, "probe", connectortest.Paced(probes)),
			weir.FromSource(p, "versions", connectortest.Paced(versions)),
			JoinSpec{Kind: LeftJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2}), "out", sink)
		if err := p.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		got = sink.Records()
	})
	var seq []string
	for _, r := range got {
		seq = append(seq, r.Op.String()+" "+rowText(r))
	}
	want := []string{"+I 1 1 - -", "+I 1 2 1 100", "+I 1 3 1 200", "+I 1 4 - -"}
	if fmt.Sprint(seq) != fmt.Sprint(want) {
		t.Fatalf("got %q, want %q", seq, want)
	}
}
