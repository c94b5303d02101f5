package state

import (
	"encoding/binary"
	"fmt"

	"github.com/weir-stream/weir/codec"
)

// Timers is a set of (time, key) timers with at most one timer per pair,
// ordered by time. It serves both event time (fired by watermarks) and
// processing time (fired by the clock).
//
// Timers are kept in a bucket per time, and the times with a bucket in a
// min-heap. Registered times mostly lie close together (a record's time
// plus a gap, a window's end), so the buckets touched are few and recently
// used, and a bucket of a few keys is searched by a scan: registering and
// firing a timer then costs no lookup in a set of every pending timer,
// which was the cost of a timer (a cache miss each) in a large set. A
// bucket of many keys (the end of a window holding every key) keeps an
// index of its keys.
type Timers[K comparable] struct {
	buckets map[int64]*timeBucket[K]
	times   timeHeap // the times of buckets; a bucket emptied by Delete stays until its time surfaces
	n       int      // pending timers
	spare   []*timeBucket[K]
	// head is the bucket of the earliest time, headT, while it is the
	// heap's first: firing the timers of one time looks it up once.
	head  *timeBucket[K]
	headT int64
}

// indexFrom is the number of keys from which a bucket keeps an index.
const indexFrom = 64

// timeBucket is the keys of the timers of one time, in no order.
type timeBucket[K comparable] struct {
	keys []K
	at   map[K]int // key -> position in keys, once there are indexFrom keys
}

// find returns the position of k in b.
func (b *timeBucket[K]) find(k K) (int, bool) {
	if b.at != nil {
		i, ok := b.at[k]
		return i, ok
	}
	for i, x := range b.keys {
		if x == k {
			return i, true
		}
	}
	return 0, false
}

// add adds k, which b does not hold.
func (b *timeBucket[K]) add(k K) {
	b.keys = append(b.keys, k)
	switch {
	case b.at != nil:
		b.at[k] = len(b.keys) - 1
	case len(b.keys) == indexFrom:
		b.at = make(map[K]int, 2*indexFrom)
		for i, x := range b.keys {
			b.at[x] = i
		}
	}
}

// remove removes the key at position i, moving the last key there.
func (b *timeBucket[K]) remove(i int) {
	last := len(b.keys) - 1
	if b.at != nil {
		delete(b.at, b.keys[i])
		if i != last {
			b.at[b.keys[last]] = i
		}
	}
	b.keys[i] = b.keys[last]
	var zero K
	b.keys[last] = zero // drop the key's references
	b.keys = b.keys[:last]
}

// timeHeap is a binary min-heap of times, written out rather than built
// on container/heap, whose interface boxes every pushed value.
type timeHeap []int64

func (h *timeHeap) push(t int64) {
	*h = append(*h, t)
	s := *h
	i := len(s) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if s[parent] <= t {
			break
		}
		s[i] = s[parent]
		i = parent
	}
	s[i] = t
}

// pop removes the earliest time; the heap must not be empty.
func (h *timeHeap) pop() {
	s := *h
	n := len(s) - 1
	last := s[n]
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
		if r := child + 1; r < n && s[r] < s[child] {
			child = r
		}
		if last <= s[child] {
			break
		}
		s[i] = s[child]
		i = child
	}
	s[i] = last
}

// NewTimers returns an empty timer set that is not part of any snapshot.
func NewTimers[K comparable]() *Timers[K] {
	return &Timers[K]{buckets: map[int64]*timeBucket[K]{}}
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
	copied := make([]timer[K], 0, t.n)
	t.each(func(at int64, k K) { copied = append(copied, timer[K]{at, k}) })
	return func(dst []byte) []byte {
		for _, tm := range copied {
			dst = binary.AppendVarint(dst, tm.t)
			dst = t.key.Append(dst, tm.key)
		}
		return dst
	}
}

// timer is a timer a snapshot copied.
type timer[K comparable] struct {
	t   int64
	key K
}

// each calls f with every pending timer, in no order.
func (s *Timers[K]) each(f func(t int64, key K)) {
	for t, b := range s.buckets {
		for _, k := range b.keys {
			f(t, k)
		}
	}
}

// Register adds a timer for key at t; registering it twice has no effect.
func (s *Timers[K]) Register(t int64, key K) {
	b := s.buckets[t]
	if b == nil {
		if n := len(s.spare); n > 0 {
			b, s.spare = s.spare[n-1], s.spare[:n-1]
		} else {
			b = &timeBucket[K]{}
		}
		s.buckets[t] = b
		s.times.push(t)
	} else if _, ok := b.find(key); ok {
		return
	}
	b.add(key)
	s.n++
}

// Delete removes the timer for key at t, if any.
func (s *Timers[K]) Delete(t int64, key K) {
	b := s.buckets[t]
	if b == nil {
		return
	}
	if i, ok := b.find(key); ok {
		b.remove(i)
		s.n--
	}
}

// first returns the earliest time with a timer and its bucket, dropping
// the buckets emptied by Delete on the way.
func (s *Timers[K]) first() (int64, *timeBucket[K], bool) {
	for len(s.times) > 0 {
		t := s.times[0]
		b := s.head
		if b == nil || s.headT != t {
			b = s.buckets[t]
			s.head, s.headT = b, t
		}
		if len(b.keys) > 0 {
			return t, b, true
		}
		s.drop(t, b)
	}
	return 0, nil, false
}

// drop forgets the empty bucket b of time t, the heap's first, keeping it
// for reuse.
func (s *Timers[K]) drop(t int64, b *timeBucket[K]) {
	s.times.pop()
	delete(s.buckets, t)
	s.head = nil
	if cap(b.keys) <= 4*indexFrom && len(s.spare) < 64 {
		b.keys, b.at = b.keys[:0], nil
		s.spare = append(s.spare, b)
	}
}

// Next returns the earliest timer's time.
func (s *Timers[K]) Next() (int64, bool) {
	t, _, ok := s.first()
	return t, ok
}

// PopDue removes and returns the earliest timer with time <= now; of the
// timers of one time, any.
func (s *Timers[K]) PopDue(now int64) (t int64, key K, ok bool) {
	var zero K
	if len(s.times) == 0 || s.times[0] > now {
		return 0, zero, false // nothing due, without looking up a bucket
	}
	t, b, ok := s.first()
	if !ok || t > now {
		return 0, zero, false
	}
	i := len(b.keys) - 1
	key = b.keys[i]
	b.remove(i)
	s.n--
	if len(b.keys) == 0 {
		s.drop(t, b)
	}
	return t, key, true
}

// Len returns the number of pending timers.
func (s *Timers[K]) Len() int { return s.n }
