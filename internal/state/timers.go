package state

import "container/heap"

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

type timerHeap[K comparable] []timer[K]

func (h timerHeap[K]) Len() int           { return len(h) }
func (h timerHeap[K]) Less(i, j int) bool { return h[i].t < h[j].t }
func (h timerHeap[K]) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timerHeap[K]) Push(x any)        { *h = append(*h, x.(timer[K])) }
func (h *timerHeap[K]) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// NewTimers returns an empty timer set.
func NewTimers[K comparable]() *Timers[K] {
	return &Timers[K]{set: map[timer[K]]struct{}{}}
}

// Register adds a timer for key at t; registering it twice has no effect.
func (s *Timers[K]) Register(t int64, key K) {
	tm := timer[K]{t, key}
	if _, ok := s.set[tm]; ok {
		return
	}
	s.set[tm] = struct{}{}
	heap.Push(&s.h, tm)
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
		heap.Pop(&s.h)
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
		heap.Pop(&s.h)
		if _, live := s.set[top]; live {
			delete(s.set, top)
			return top.t, top.key, true
		}
	}
	var zero K
	return 0, zero, false
}

// Len returns the number of pending timers.
func (s *Timers[K]) Len() int { return len(s.set) }
