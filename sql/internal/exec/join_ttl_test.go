package exec

import (
	"context"
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
