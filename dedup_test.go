package weir_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
)

// delivery is a record as an at-least-once input delivers it: ID is its
// identity, Copy tells the copies apart.
type delivery struct {
	ID   int64
	TS   int64
	Copy int
}

// deliveries returns n distinct records, each delivered one to three times,
// the copies at most 50 positions apart (as a retrying producer or a
// replay would place them), with event times within disorder of their
// position.
func deliveries(seed uint64, n int, disorder int64) []delivery {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]delivery, 0, 2*n)
	for i := range int64(n) {
		ts := i*2 - rng.Int64N(disorder+1)
		out = append(out, delivery{ID: i, TS: ts})
		for c := range rng.IntN(3) {
			out = append(out, delivery{ID: i, TS: ts, Copy: c + 1})
		}
	}
	// Move copies forward by up to 50 positions.
	for i := len(out) - 1; i > 0; i-- {
		if out[i].Copy > 0 {
			j := i + rng.IntN(50)
			if j < len(out) {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func deliveryTime(d delivery) int64 { return d.TS }
func deliveryID(d delivery) int64   { return d.ID }

func TestDeduplicateForwardsEachRecordOnce(t *testing.T) {
	in := deliveries(1, 20_000, 30)
	for _, par := range []int{1, 2, 3} {
		for _, filter := range []bool{true, false} {
			p := weir.NewPipeline(weir.WithParallelism(par))
			// Copies may sit 50 positions (about 100ms of event time) after
			// the first: an out-of-orderness bound of 200ms covers them.
			src := weir.FromSource(p, "deliveries", sliceSource[delivery]{items: in}, weir.WithTimestamps(deliveryTime, 200*time.Millisecond))
			stats := &weir.DedupStats{}
			opts := []weir.DedupOption{weir.Name("dedup"), weir.DedupStatsTo(stats), weir.DedupExpectedIDs(4096)}
			if !filter {
				opts = append(opts, weir.DedupWithoutFilter())
			}
			out := &sink[delivery]{}
			weir.To(weir.DeduplicateBy(src, deliveryID, time.Second, opts...), "out", out)
			run(t, p)
			got := out.sorted(func(a, b delivery) bool { return a.ID < b.ID })
			if len(got) != 20_000 {
				t.Fatalf("parallelism %d, filter %v: %d records out, want the 20000 distinct ones", par, filter, len(got))
			}
			for i, d := range got {
				if d.ID != int64(i) {
					t.Fatalf("parallelism %d: record %d has id %d: an id is missing or repeated", par, i, d.ID)
				}
			}
			c := stats.Counts()
			if c.Records != int64(len(in)) || c.Duplicates != int64(len(in)-20_000) || c.Late != 0 {
				t.Fatalf("parallelism %d, filter %v: counts %+v, want %d records, %d duplicates, none late", par, filter, c, len(in), len(in)-20_000)
			}
			if c.IDs != 0 || c.FilterBits != 0 {
				t.Fatalf("gauges after the job ended: %+v", c)
			}
			if filter && c.FilterNegatives < 20_000 {
				t.Fatalf("the filter saved only %d exact lookups for 20000 new ids: %+v", c.FilterNegatives, c)
			}
		}
	}
}

func TestDeduplicateExpiresAtTheHorizonInAPipeline(t *testing.T) {
	// One record per read with a watermark after each (wm = max time - 1),
	// so the watermark each record meets is fixed. Horizon 100ms.
	events := []ev{
		{"a", 1000}, // forwarded
		{"a", 1000}, // a copy
		{"a", 1050}, // key a is remembered until the watermark reaches 1100
		{"b", 1100}, // forwarded; watermark 1099
		{"a", 1000}, // still remembered at 1099
		{"c", 1101}, // forwarded; watermark 1100
		{"a", 1000}, // late: 1000+100 <= 1100
		{"a", 1100}, // key a was forgotten at 1100: forwarded
		{"a", 1150}, // remembered from 1100
	}
	p, src := orderedPipeline(events, 0)
	late := weir.NewOutputTag[ev]("late")
	stats := &weir.DedupStats{}
	out, lateOut := &sink[ev]{}, &sink[ev]{}
	weir.To(weir.Deduplicate(weir.KeyBy(src, evKey), 100*time.Millisecond, weir.DedupLateTo(late), weir.DedupStatsTo(stats)), "out", out)
	weir.To(weir.SideOutput(late), "late", lateOut)
	run(t, p)
	if want := []ev{{"a", 1000}, {"b", 1100}, {"c", 1101}, {"a", 1100}}; !slices.Equal(out.recs, want) {
		t.Fatalf("forwarded %v, want %v", out.recs, want)
	}
	if !slices.Equal(lateOut.recs, []ev{{"a", 1000}}) {
		t.Fatalf("late %v, want [{a 1000}]", lateOut.recs)
	}
	if c := stats.Counts(); c.Duplicates != 4 || c.Late != 1 {
		t.Fatalf("counts %+v, want 4 duplicates and 1 late", c)
	}
}

func TestDeduplicateRejectsBadArguments(t *testing.T) {
	for _, c := range []struct {
		name string
		opts []weir.DedupOption
		h    time.Duration
		want string
	}{
		{"zero horizon", nil, 0, "horizon"},
		{"false-positive rate", []weir.DedupOption{weir.DedupFalsePositiveRate(1)}, time.Second, "false-positive rate"},
		{"expected ids", []weir.DedupOption{weir.DedupExpectedIDs(0)}, time.Second, "expected ids"},
		{"side output type", []weir.DedupOption{weir.DedupLateTo(weir.NewOutputTag[int]("late"))}, time.Second, "DedupLateTo"},
	} {
		p := weir.NewPipeline()
		src := weir.FromSource(p, "events", sliceSource[ev]{items: []ev{{"a", 1}}}, weir.WithTimestamps(evTime, 0))
		weir.To(weir.Deduplicate(weir.KeyBy(src, evKey), c.h, c.opts...), "out", &sink[ev]{})
		if err := p.Run(context.Background()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error about %q", c.name, err, c.want)
		}
	}
	p := weir.NewPipeline()
	src := weir.FromSource(p, "events", sliceSource[ev]{items: []ev{{"a", 1}}}) // no timestamps
	weir.To(weir.Deduplicate(weir.KeyBy(src, evKey), time.Second), "out", &sink[ev]{})
	if err := p.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "event time") {
		t.Errorf("without timestamps: got %v, want an error about event time", err)
	}
}
