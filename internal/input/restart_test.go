package input

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestARestartedSubtaskRepeatsItsLoggedOrderAndDropsDuplicates runs a
// subtask on random interleavings of its channels, taking snapshots now
// and then and logging the order in which it consumed its channels,
// stops it at a random point, and restarts it alone from its latest
// snapshot: it restores the counts, follows the logged order, and asks
// for replays. Each channel's queue then holds what was sent to the
// failed incarnation, a stale Replay, and the sender's replay, which
// starts a little below the restored count (a regenerated batch is cut
// differently) and carries on to the end. The test checks that the two
// incarnations together deliver each record exactly once, in order, and
// that the restarted one consumes its channels in the logged order
// before it reads freely.
func TestARestartedSubtaskRepeatsItsLoggedOrderAndDropsDuplicates(t *testing.T) {
	for seed := range uint64(500) {
		r := &restartRun{t: t, rnd: rand.New(rand.NewPCG(seed, 99))}
		r.run()
		if t.Failed() {
			t.Fatalf("seed %d failed; the steps:\n%s", seed, strings.Join(r.trace, "\n"))
		}
	}
}

type restartRun struct {
	t     *testing.T
	rnd   *rand.Rand
	trace []string

	totals    []int64
	queues    [][]Element
	delivered []int64 // per channel: the next record expected
	log       []Turn  // the consumption order since the latest snapshot
	held      []*Element
}

func (r *restartRun) run() {
	n := 1 + r.rnd.IntN(3)
	r.totals = make([]int64, n)
	for c := range r.totals {
		r.totals[c] = r.rnd.Int64N(30)
	}
	// The first incarnation: every channel's records, cut into batches.
	p1 := r.start(Config{Channels: n}, nil, nil)
	r.queues = make([][]Element, n)
	for c := range r.queues {
		r.queues[c] = r.batches(c, 0)
	}
	restored := make([]int64, n)
	var wms *Watermarks
	var id int64
	for steps := r.rnd.IntN(60); steps > 0 && !p1.Finished() && !r.t.Failed(); steps-- {
		if r.rnd.IntN(8) == 0 {
			id++
			for _, a := range r.apply(fmt.Sprintf("snapshot %d", id), snapshotNow(p1, id)) {
				if a.Kind == Snapshot {
					copy(restored, a.Counts)
					wms = a.Watermarks
					r.log = nil // the order before it is not needed
				}
			}
			continue
		}
		r.poll(p1)
	}
	order := r.log
	r.trace = append(r.trace, fmt.Sprintf("-- restart from %v following %v", restored, order))
	// The restarted incarnation.
	p2 := r.start(Config{Channels: n}, &State{Counts: restored, Watermarks: wms}, order)
	copy(r.delivered, restored)
	r.log = nil
	for c := range r.queues {
		stale := append(r.queues[c], Element{Kind: Replay, Seq: 0, Incarnation: 1})
		from := max(0, restored[c]-r.rnd.Int64N(4))
		r.queues[c] = append(append(stale, Element{Kind: Replay, Seq: restored[c], Incarnation: 2}), r.batches(c, from)...)
	}
	r.apply("request-replays 2", p2.RequestReplays(2))
	for !p2.Finished() && !r.t.Failed() {
		if !r.poll(p2) {
			r.t.Errorf("stuck before the end: queues %v", r.queues)
			return
		}
	}
	for c, d := range r.delivered {
		if d != r.totals[c] {
			r.t.Errorf("channel %d: delivered up to %d of %d records", c, d, r.totals[c])
		}
	}
	for i, turn := range order {
		if i >= len(r.log) || r.log[i].Ch != turn.Ch || (r.log[i].UpTo != turn.UpTo && i < len(order)-1) || r.log[i].UpTo < turn.UpTo {
			r.t.Errorf("the restarted incarnation consumed %v, not in the logged order %v", r.log, order)
			return
		}
	}
}

// start returns a protocol, restored from st and following order if
// given.
func (r *restartRun) start(cfg Config, st *State, order []Turn) *Protocol {
	p, err := New(cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	if st != nil {
		if err := p.Restore(*st); err != nil {
			r.t.Fatal(err)
		}
	}
	if order != nil {
		p.Follow(order)
	}
	r.delivered = make([]int64, cfg.Channels)
	r.held = make([]*Element, cfg.Channels)
	return p
}

// batches cuts channel c's records from from on into batches, then End.
func (r *restartRun) batches(c int, from int64) []Element {
	var out []Element
	for seq := from; seq < r.totals[c]; {
		n := min(1+r.rnd.Int64N(5), r.totals[c]-seq)
		out = append(out, Element{Kind: Data, Seq: seq, N: int(n)})
		seq += n
	}
	return append(out, Element{Kind: End})
}

// poll reads one element where Next says and steps it; it reports
// whether there was one.
func (r *restartRun) poll(p *Protocol) bool {
	ch, only := p.Next()
	if !only {
		var ready []int
		for c := range r.queues {
			if len(r.queues[c]) > 0 {
				ready = append(ready, c)
			}
		}
		if len(ready) == 0 {
			return false
		}
		ch = ready[r.rnd.IntN(len(ready))]
	}
	var e Element
	if only && r.held[ch] != nil { // held batches come first where Next says only
		e, r.held[ch] = *r.held[ch], nil
	} else {
		if len(r.queues[ch]) == 0 {
			return false
		}
		e, r.queues[ch] = r.queues[ch][0], r.queues[ch][1:]
	}
	for _, a := range r.apply(fmt.Sprintf("step ch=%d %v", ch, e), p.Step(ch, e)) {
		if a.Kind == Deliver && a.Hold {
			r.held[ch] = &e
		}
	}
	return true
}

// apply checks the actions and notes the deliveries in the log.
func (r *restartRun) apply(what string, actions []Action) []Action {
	r.trace = append(r.trace, what)
	for _, a := range actions {
		r.trace = append(r.trace, "  "+a.String())
		switch a.Kind {
		case Deliver:
			if a.From != r.delivered[a.Ch] || a.To <= a.From {
				r.t.Errorf("channel %d: delivered [%d,%d), want from %d on", a.Ch, a.From, a.To, r.delivered[a.Ch])
			}
			r.delivered[a.Ch] = a.To
			if n := len(r.log); n > 0 && r.log[n-1].Ch == a.Ch {
				r.log[n-1].UpTo = a.To
			} else {
				r.log = append(r.log, Turn{Ch: a.Ch, UpTo: a.To})
			}
		case Fail:
			r.t.Errorf("failed: %v", a.Err)
		case Snapshot, Report, Discard, Advance, Finish, RequestReplay, ReplayStarted:
		default:
			r.t.Errorf("unexpected %v", a)
		}
	}
	return actions
}

// snapshotNow takes checkpoint id's snapshot where p stands, as barriers
// right behind the records consumed on every channel would.
func snapshotNow(p *Protocol, id int64) []Action {
	p.out = p.out[:0]
	p.takeSnapshot(id, false, nil)
	return p.out
}
