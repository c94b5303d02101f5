package state

import (
	"encoding/binary"
	"fmt"

	"github.com/weir-stream/weir/codec"
)

// Timers is a set of (time, key) timers with at most one timer per pair,
// ordered by time. It serves both event time (fired by watermarks) and
// processing time (fired by the clock).
type Timers[K comparable] struct {
	set map[timer[K]]struct{}
	h   timerHeap[K]
}

type timer[K comparable] struct {
	t   int64
	key K
}

// timerHeap is a binary min-heap of timers by time. It is written out
// rather than built on container/heap, whose interface boxes every pushed
// timer (an allocation per registration).
type timerHeap[K comparable] []timer[K]

func (h *timerHeap[K]) push(tm timer[K]) {
	*h = append(*h, tm)
	s := *h
	i := len(s) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if s[parent].t <= tm.t {
			break
		}
		s[i] = s[parent]
		i = parent
	}
	s[i] = tm
}

// pop removes the earliest timer; the heap must not be empty.
func (h *timerHeap[K]) pop() {
	s := *h
	n := len(s) - 1
	last := s[n]
	s[n] = timer[K]{} // drop the key's references
	s = s[:n]
	*h = s
	if n == 0 {
		return
	}
	i := 0
	for {
		child := 2*i + 1
		if child >= n {
			break
		}
		if r := child + 1; r < n && s[r].t < s[child].t {
			child = r
		}
		if last.t <= s[child].t {
			break
		}
		s[i] = s[child]
		i = child
	}
	s[i] = last
}

// NewTimers returns an empty timer set that is not part of any snapshot.
func NewTimers[K comparable]() *Timers[K] {
	return &Timers[K]{set: map[timer[K]]struct{}{}}
}

// RegisterTimers returns a timer set that is snapshotted with b under
// name, restored from b's restored snapshot if it holds one. keyGroup, if
// not nil, filters restored timers to the key groups b owns.
func RegisterTimers[K comparable](b *Backend, name string, key codec.Codec[K], keyGroup func(K) int) (*Timers[K], error) {
	if p, ok := b.parts[name]; ok {
		t, ok := p.(*timerPart[K])
		if !ok {
			return nil, fmt.Errorf("state %q is already registered with other types", name)
		}
		return t.Timers, nil
	}
	if key == nil {
		return nil, fmt.Errorf("timers %q: missing key codec", name)
	}
	t := &timerPart[K]{Timers: NewTimers[K](), key: key, schemas: partSchema{key: schemaOf(key)}.encode()}
	written, err := b.claimSchema(name)
	if err == nil {
		err = checkKeys(key, written.key)
	}
	if err != nil {
		return nil, fmt.Errorf("restoring timers %q: %w", name, err)
	}
	cs, _ := b.claim(name)
	for _, c := range cs {
		start, end := b.owns(c)
		data := c.data
		for len(data) > 0 {
			ts, n := binary.Varint(data)
			if n <= 0 {
				return nil, fmt.Errorf("restoring timers %q: bad time: %w", name, codec.ErrCorrupt)
			}
			data = data[n:]
			var k K
			n, err := key.Decode(data, &k)
			if err != nil {
				return nil, fmt.Errorf("restoring timers %q: %w", name, err)
			}
			data = data[n:]
			if keyGroup != nil {
				if kg := keyGroup(k); kg < start || kg >= end {
					continue
				}
			}
			t.Register(ts, k)
		}
	}
	if err := adoptTimers(b, t, name, keyGroup); err != nil {
		return nil, err
	}
	b.add(name, t)
	return t.Timers, nil
}

// timerPart snapshots a timer set by copying its timers synchronously.
type timerPart[K comparable] struct {
	*Timers[K]
	key     codec.Codec[K]
	schemas []byte // the encoded partSchema of the keys
}

func (t *timerPart[K]) schema() []byte { return t.schemas }

func (t *timerPart[K]) view() func([]byte) []byte { return t.freeze() }

func (t *timerPart[K]) freeze() func([]byte) []byte {
	copied := make([]timer[K], 0, len(t.set))
	for tm := range t.set {
		copied = append(copied, tm)
	}
	return func(dst []byte) []byte {
		for _, tm := range copied {
			dst = binary.AppendVarint(dst, tm.t)
			dst = t.key.Append(dst, tm.key)
		}
		return dst
	}
}

// Register adds a timer for key at t; registering it twice has no effect.
func (s *Timers[K]) Register(t int64, key K) {
	tm := timer[K]{t, key}
	n := len(s.set)
	s.set[tm] = struct{}{} // one map operation: the size says whether it was new
	if len(s.set) == n {
		return
	}
	s.h.push(tm)
}

// Delete removes the timer for key at t, if any.
func (s *Timers[K]) Delete(t int64, key K) {
	delete(s.set, timer[K]{t, key})
	// The heap entry stays and is skipped when it surfaces.
}

// Next returns the earliest timer's time.
func (s *Timers[K]) Next() (int64, bool) {
	for len(s.h) > 0 {
		top := s.h[0]
		if _, ok := s.set[top]; ok {
			return top.t, true
		}
		s.h.pop()
	}
	return 0, false
}

// PopDue removes and returns the earliest timer with time <= now.
func (s *Timers[K]) PopDue(now int64) (t int64, key K, ok bool) {
	for len(s.h) > 0 {
		top := s.h[0]
		if top.t > now {
			break
		}
		s.h.pop()
		n := len(s.set)
		delete(s.set, top) // one map operation: the size says whether it was live
		if len(s.set) < n {
			return top.t, top.key, true
		}
	}
	var zero K
	return 0, zero, false
}

// Len returns the number of pending timers.
func (s *Timers[K]) Len() int { return len(s.set) }
