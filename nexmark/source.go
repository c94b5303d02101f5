package nexmark

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"

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
// generators, so a restore rewinds the source exactly.
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

func (s *source) Open(_ context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[Event], error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	r := &reader{}
	for k := info.Subtask; k < len(s.gens); k += info.Parallelism {
		r.gens = append(r.gens, s.gens[k])
	}
	r.next = make([]int64, len(r.gens))
	if len(pos) > 0 {
		data := pos
		for i := range r.next {
			v, n := binary.Uvarint(data)
			if n <= 0 {
				return nil, fmt.Errorf("nexmark: corrupt position %x for subtask %d of %d", []byte(pos), info.Subtask, info.Parallelism)
			}
			r.next[i] = int64(v)
			data = data[n:]
		}
		if len(data) != 0 {
			return nil, fmt.Errorf("nexmark: position %x does not fit subtask %d of %d", []byte(pos), info.Subtask, info.Parallelism)
		}
		// Resume the round at the first generator that is behind.
		for k := range r.next {
			if r.next[k] < r.next[r.turn] {
				r.turn = k
			}
		}
	}
	return r, nil
}

type reader struct {
	gens []*Generator
	next []int64
	turn int
}

// Read takes one event from each generator in turn.
func (r *reader) Read(_ context.Context, buf []Event) (int, error) {
	n := 0
	exhausted := 0
	for n < len(buf) && exhausted < len(r.gens) {
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
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
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
