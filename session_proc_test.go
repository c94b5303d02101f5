package weir_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
)

// arrival is one record of arrivalSource: its key and how long the
// source waits before it emits it.
type arrival struct {
	key   string
	delay time.Duration
}

// arrivalSource emits its records one at a time after their delays (a
// fake clock's, in a synctest bubble), stamping each with the clock in
// epoch milliseconds (ev.TS, not as event time), then waits tail before
// its input ends. It records when it ended.
type arrivalSource struct {
	recs []arrival
	tail time.Duration
	mu   *sync.Mutex
	end  *int64
}

func (s arrivalSource) Open(context.Context, connector.SubtaskInfo, connector.Position) (connector.Reader[ev], error) {
	return &arrivalReader{s: s}, nil
}

type arrivalReader struct {
	s arrivalSource
	i int
}

func (r *arrivalReader) Read(_ context.Context, buf []ev) (int, error) {
	if r.i == len(r.s.recs) {
		time.Sleep(r.s.tail)
		r.s.mu.Lock()
		*r.s.end = time.Now().UnixMilli()
		r.s.mu.Unlock()
		return 0, errEOF
	}
	a := r.s.recs[r.i]
	time.Sleep(a.delay)
	buf[0] = ev{Key: a.key, TS: time.Now().UnixMilli()}
	r.i++
	return 1, nil
}

func (r *arrivalReader) Position() connector.Position { return nil }
func (r *arrivalReader) Close() error                 { return nil }

// sessionsOf is the brute-force sessionization of arrival times: per
// key, records arriving no more than gap-2ms after the key's previous
// one join its session (the test's arrivals never fall within 2ms of the
// gap, where the firing races the record); a session is [first,
// last+gap).
func sessionsOf(recs []ev, gap int64) []string {
	var out []string
	open := map[string][]ev{}
	flush := func(k string) {
		l := open[k]
		out = append(out, firing(k, weir.Window{Start: l[0].TS, End: l[len(l)-1].TS + gap}, l))
	}
	for _, r := range recs {
		if l := open[r.Key]; len(l) > 0 && r.TS-l[len(l)-1].TS > gap-2 {
			flush(r.Key)
			open[r.Key] = nil
		}
		open[r.Key] = append(open[r.Key], r)
	}
	for k := range open {
		flush(k)
	}
	slices.Sort(out)
	return out
}

// Processing-time session windows sessionize records by the clock at
// which they arrive, as a brute-force sessionization of the arrival
// times does; a session fires when the clock passes its end (or, still
// open when the input ends, then), with its MaxTimestamp as event time.
func TestSessionProcessingTimeMatchesBruteForce(t *testing.T) {
	const gap = 155 * time.Millisecond
	for _, c := range []struct {
		name string
		tail time.Duration
		seed uint64
	}{{"fired by the clock", time.Second, 3}, {"open at the end of input", 0, 4}} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(c.seed, 1))
			delays := []time.Duration{10, 20, 30, 40, 50, 60, 80, 150}
			recs := make([]arrival, 300)
			for i := range recs {
				recs[i] = arrival{string(rune('a' + r.IntN(4))), delays[r.IntN(len(delays))] * time.Millisecond}
			}
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var ended int64
				seen := &sink[ev]{}
				fired := map[string]int64{} // firing -> the clock when it fired
				p := weir.NewPipeline(weir.WithParallelism(2), weir.WithBufferTimeout(time.Millisecond))
				in := weir.FromSource(p, "arrivals", connector.Source[ev](arrivalSource{recs: recs, tail: c.tail, mu: &mu, end: &ended}), weir.SourceParallelism(1))
				weir.To(in, "seen", seen)
				w := weir.WindowBy(weir.KeyBy(in, evKey), weir.SessionProcessingTime(gap))
				sessions := weir.ProcessWindow(w, func(key string, win weir.Window, l []ev, emit func(string)) error {
					f := firing(key, win, l)
					mu.Lock()
					fired[f] = time.Now().UnixMilli()
					mu.Unlock()
					emit(f)
					return nil
				})
				out := &sink[string]{}
				weir.To(weir.ProcessStream(sessions, func(ctx *weir.RecordContext[string], f string) error {
					ctx.Emit(fmt.Sprintf("%s @%d", f, ctx.Timestamp()))
					return nil
				}), "out", out)
				run(t, p)

				var got []string
				for _, f := range out.recs {
					f, at, _ := strings.Cut(f, " @")
					var start, end int64
					fmt.Sscanf(f[strings.Index(f, "["):], "[%d,%d)", &start, &end)
					if want := fmt.Sprint(end - 1); at != want {
						t.Errorf("session %s carries event time %s, want its MaxTimestamp %s", f, at, want)
					}
					got = append(got, f)
				}
				slices.Sort(got)
				want := sessionsOf(seen.sorted(func(a, b ev) bool { return a.TS < b.TS }), gap.Milliseconds())
				if len(want) < 20 || len(want) > len(recs)*3/4 {
					t.Fatalf("the arrivals form %d sessions of %d records; the test wants many sessions, most merging", len(want), len(recs))
				}
				if !slices.Equal(got, want) {
					t.Fatalf("got %d sessions, want %d\ngot  %q\nwant %q", len(got), len(want), got, want)
				}
				for f, at := range fired {
					var start, end int64
					fmt.Sscanf(f[strings.Index(f, "["):], "[%d,%d)", &start, &end)
					if c.tail > 0 && (at < end-1 || at >= ended) {
						t.Errorf("session %s fired at %d, want when the clock passed its end, before the input ended", f, at)
					}
				}
			})
		})
	}
}
