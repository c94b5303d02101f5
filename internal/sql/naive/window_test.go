package naive

import (
	"slices"
	"testing"

	"github.com/weir-stream/weir/internal/sql/plan"
	"github.com/weir-stream/weir/internal/sql/row"
)

func TestWindowsOfATimeAreTheTumbleHopAndCumulateWindowsHoldingIt(t *testing.T) {
	for _, c := range []struct {
		w    plan.Window
		t    int64
		want []span
	}{
		{plan.Window{Kind: plan.Tumble, Size: 10}, 13, []span{{10, 20}}},
		{plan.Window{Kind: plan.Tumble, Size: 10}, -3, []span{{-10, 0}}},
		{plan.Window{Kind: plan.Tumble, Size: 10, Offset: 3}, 12, []span{{3, 13}}},
		{plan.Window{Kind: plan.Hop, Size: 10, Slide: 5}, 12, []span{{10, 20}, {5, 15}}},
		{plan.Window{Kind: plan.Hop, Size: 10, Slide: 5}, 10, []span{{10, 20}, {5, 15}}},
		{plan.Window{Kind: plan.Cumulate, Size: 12, Step: 4}, 17, []span{{12, 20}, {12, 24}}},
		{plan.Window{Kind: plan.Cumulate, Size: 12, Step: 4}, 12, []span{{12, 16}, {12, 20}, {12, 24}}},
	} {
		if got := windowsOf(c.w, c.t); !slices.Equal(got, c.want) {
			t.Errorf("%s at %d: %v, want %v", c.w, c.t, got, c.want)
		}
	}
}

func TestSessionsMergeTheRowsOfAPartitionLessThanTheGapApart(t *testing.T) {
	rows := []row.Row{
		row.New(row.BigInt(1), row.Timestamp(10)),
		row.New(row.BigInt(2), row.Timestamp(11)),
		row.New(row.BigInt(1), row.Timestamp(14)),
		row.New(row.BigInt(1), row.Timestamp(2)),
		row.New(row.BigInt(1), row.Timestamp(30)),
		row.New(row.BigInt(1), row.Null()),
	}
	got := map[int64][]span{}
	assign(plan.Window{Kind: plan.Session, Gap: 5, TimeCol: 1}, rows, []int{0}, func(r row.Row, s span) {
		got[r.V[1].I] = append(got[r.V[1].I], s)
	})
	want := map[int64][]span{2: {{2, 7}}, 10: {{10, 19}}, 14: {{10, 19}}, 11: {{11, 16}}, 30: {{30, 35}}}
	if len(got) != len(want) {
		t.Fatalf("windows %v, want %v", got, want)
	}
	for ts, w := range want {
		if !slices.Equal(got[ts], w) {
			t.Errorf("the row at %d is in %v, want %v", ts, got[ts], w)
		}
	}
}
