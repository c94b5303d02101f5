package nexmark

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/weir-stream/weir/connector"
)

// Source returns a replayable source of the events of cfg: the generator
// is split into cfg.NumEventGenerators generators as Beam splits it, and
// subtask s of n runs the generators k with k mod n == s, taking one event
// from each in turn, which keeps its events in timestamp order. The events
// of all subtasks together are the same whatever the parallelism.
//
// With fewer events than generators, only as many generators as events
// are used (Beam would make the surplus ones unbounded).
//
// A position is the index of the next event of each of the subtask's
// generators, so a restore rewinds the source exactly. Positions move to
// another parallelism generator by generator (Rescale).
func Source(cfg Config) (connector.Source[Event], error) {
	g, err := NewGenerator(cfg)
	if err != nil {
		return nil, err
	}
	n := cfg.NumEventGenerators
	if n < 1 {
		n = 1
	}
	if cfg.NumEvents > 0 && int64(n) > cfg.NumEvents {
		// Beam's split makes the parts beyond the last event unbounded;
		// a bounded stream never needs more generators than events.
		n = int(cfg.NumEvents)
	}
	return &source{gens: g.Split(n)}, nil
}

type source struct{ gens []*Generator }

// read counts the events the readers of every Source have read.
var read atomic.Int64

// Read returns the number of events the readers of every Source in this
// process have read so far, re-reads after a restore included. A
// benchmark finds the end of its warm-up with it where the source is not
// its own to wrap (a SQL table's).
func Read() int64 { return read.Load() }

func (s *source) Open(_ context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[Event], error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	r := &reader{}
	for _, k := range stride(len(s.gens), info.Subtask, info.Parallelism) {
		r.gens = append(r.gens, s.gens[k])
	}
	next, err := decodePosition(pos, len(r.gens), info)
	if err != nil {
		return nil, err
	}
	r.next = next
	r.level()
	return r, nil
}

// decodePosition returns the next index of each of a subtask's k
// generators from its position (all 0 for an empty one).
func decodePosition(pos connector.Position, k int, info connector.SubtaskInfo) ([]int64, error) {
	next := make([]int64, k)
	if len(pos) == 0 {
		return next, nil
	}
	data := pos
	for i := range next {
		v, n := binary.Uvarint(data)
		if n <= 0 {
			return nil, fmt.Errorf("nexmark: corrupt position %x for subtask %d of %d", []byte(pos), info.Subtask, info.Parallelism)
		}
		next[i] = int64(v)
		data = data[n:]
	}
	if len(data) != 0 {
		return nil, fmt.Errorf("nexmark: position %x does not fit subtask %d of %d", []byte(pos), info.Subtask, info.Parallelism)
	}
	return next, nil
}

type reader struct {
	gens []*Generator
	next []int64
	turn int
	// uneven is set while the generators with events left stand further
	// apart than a round leaves them (after a rescale dealt them out from
	// subtasks that had read different amounts): Read then takes from
	// the one furthest behind, so that the events stay in timestamp
	// order (the generators share one timeline).
	uneven bool
}

// Read takes one event from each generator in turn; while the generators
// are uneven, from the one furthest behind.
func (r *reader) Read(_ context.Context, buf []Event) (int, error) {
	n := 0
	exhausted := 0
	for n < len(buf) && exhausted < len(r.gens) {
		if r.uneven {
			k := r.behind()
			if k < 0 {
				break
			}
			r.gens[k].EventAt(r.next[k], &buf[n])
			r.next[k]++
			n++
			continue
		}
		k := r.turn
		if r.turn++; r.turn == len(r.gens) {
			r.turn = 0
		}
		g := r.gens[k]
		if r.next[k] >= g.MaxEvents() {
			exhausted++
			continue
		}
		exhausted = 0
		g.EventAt(r.next[k], &buf[n])
		r.next[k]++
		n++
	}
	if r.uneven {
		r.level()
	}
	if n == 0 {
		return 0, io.EOF
	}
	read.Add(int64(n))
	return n, nil
}

// behind returns the first of the generators with events left whose next
// index is the lowest, or -1 if all are exhausted.
func (r *reader) behind() int {
	best := -1
	for k, g := range r.gens {
		if r.next[k] < g.MaxEvents() && (best < 0 || r.next[k] < r.next[best]) {
			best = k
		}
	}
	return best
}

// level decides how Read goes on: in turns from the first generator
// furthest behind, if the generators with events left stand as a round
// leaves them (those before it one event ahead, those from it on level
// with it); otherwise uneven, from the one furthest behind until they do.
func (r *reader) level() {
	lo := r.behind()
	r.uneven, r.turn = false, max(lo, 0)
	for k, g := range r.gens {
		if r.next[k] >= g.MaxEvents() || lo < 0 {
			continue
		}
		want := r.next[lo]
		if k < lo {
			want++
		}
		if r.next[k] != want {
			r.uneven = true
		}
	}
}

// Position encodes the next index of every generator; the round resumes
// at the first generator that is behind the others.
func (r *reader) Position() connector.Position {
	var out []byte
	for _, v := range r.next {
		out = binary.AppendUvarint(out, uint64(v))
	}
	return out
}

func (r *reader) Close() error { return nil }

// Deterministic reports that a reader opened at a position returns the
// same events in the same order every time (connector.Deterministic).
func (s *source) Deterministic() bool { return true }
