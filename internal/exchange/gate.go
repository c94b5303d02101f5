package exchange

import (
	"context"
	"sync"
	"time"
)

// Gate is the input side of one task: Channels bounded FIFO queues, filled
// by senders (one per channel) and drained by the task's single goroutine.
//
// Send blocks while the channel holds Capacity elements; Poll never blocks.
// A receiver that finds nothing waits on Ready. Block and Unblock let the
// receiver stop consuming one channel (barrier alignment) while its
// elements stay queued, so a blocked channel exerts backpressure on its
// sender instead of growing without bound.
type Gate struct {
	mu       sync.Mutex
	queues   []queue
	capacity int
	next     int // round-robin start for Poll
	ready    chan struct{}
	prio     []prioElement // barriers that overtook their channel's queue
	onTake   func(ch int)  // see OnTake
	discard  bool          // see Discard
	watch    bool          // see Watch
}

type prioElement struct {
	ch int
	e  Element
}

// markerSlots is the room each queue keeps beyond its capacity for the
// markers of overtaking barriers.
const markerSlots = 8

type queue struct {
	elems   []Element // ring buffer
	head    int
	n       int
	extra   int // elements queued beyond capacity (see DeliverReplay, Unpoll)
	blocked bool
	waiting bool          // the sender waits for room (see Status)
	space   chan struct{} // signalled when an element is removed from a full queue
}

// NewGate returns a gate with n channels of the given capacity (in elements).
func NewGate(n, capacity int) *Gate {
	if capacity < 1 {
		capacity = 1
	}
	g := &Gate{queues: make([]queue, n), capacity: capacity, ready: make(chan struct{}, 1)}
	for i := range g.queues {
		g.queues[i].elems = make([]Element, capacity+markerSlots)
		g.queues[i].space = make(chan struct{}, 1)
	}
	return g
}

// Channels returns the number of channels.
func (g *Gate) Channels() int { return len(g.queues) }

// Send appends e to channel ch, waiting while the channel is full. It
// returns ctx.Err() if ctx ends first; then e was not sent. Each channel has
// exactly one sender; Send is safe to call concurrently for different
// channels.
func (g *Gate) Send(ctx context.Context, ch int, e Element) error {
	_, err := g.SendTimed(ctx, ch, e)
	return err
}

// SendTimed is Send that also reports how long it waited for room: the
// time the sender was backpressured. It reads the clock only when it has
// to wait.
func (g *Gate) SendTimed(ctx context.Context, ch int, e Element) (time.Duration, error) {
	q := &g.queues[ch]
	var waitStart time.Time
	waited := func() time.Duration {
		if waitStart.IsZero() {
			return 0
		}
		return time.Since(waitStart)
	}
	for {
		g.mu.Lock()
		if g.discard {
			q.waiting = false
			g.mu.Unlock()
			if e.Buf != nil {
				PutBuffer(e.Buf)
			}
			return waited(), nil
		}
		if q.n-q.extra < g.capacity {
			if q.n == len(q.elems) {
				q.grow()
			}
			q.elems[(q.head+q.n)%len(q.elems)] = e
			q.n++
			q.waiting = false
			wake := !q.blocked || g.watch
			g.mu.Unlock()
			if wake {
				g.signal()
			}
			return waited(), nil
		}
		q.waiting = true
		g.mu.Unlock()
		if waitStart.IsZero() {
			waitStart = time.Now()
		}
		select {
		case <-q.space:
		case <-ctx.Done():
			g.mu.Lock()
			q.waiting = false
			g.mu.Unlock()
			return waited(), ctx.Err()
		}
	}
}

func (g *Gate) signal() {
	select {
	case g.ready <- struct{}{}:
	default:
	}
}

// Poll removes and returns the next element of an unblocked channel, taking
// channels in turn so that no channel starves. ok is false when no unblocked
// channel holds an element.
func (g *Gate) Poll() (ch int, e Element, ok bool) {
	ch, e, credit, ok := g.poll()
	if ok && credit && g.onTake != nil && e.Kind != Marker {
		g.onTake(ch)
	}
	return ch, e, ok
}

func (g *Gate) poll() (ch int, e Element, credit, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.prio) > 0 {
		p := g.prio[0]
		g.prio = g.prio[1:]
		return p.ch, p.e, false, true
	}
	n := len(g.queues)
	for i := 0; i < n; i++ {
		c := (g.next + i) % n
		q := &g.queues[c]
		if q.n == 0 || q.blocked {
			continue
		}
		g.next = (c + 1) % n
		e, credit := q.take(g.capacity)
		return c, e, credit, true
	}
	return 0, Element{}, false, false
}

// PollChannel removes and returns the next element of channel ch, blocked
// or not: a restarted task that repeats a logged consumption order takes
// its channels in that order. ok is false when ch holds nothing.
func (g *Gate) PollChannel(ch int) (e Element, ok bool) {
	g.mu.Lock()
	q := &g.queues[ch]
	if q.n == 0 {
		g.mu.Unlock()
		return Element{}, false
	}
	e, credit := q.take(g.capacity)
	g.mu.Unlock()
	if credit && g.onTake != nil && e.Kind != Marker {
		g.onTake(ch)
	}
	return e, true
}

// Unpoll puts e, which Poll or PollChannel just returned from channel ch
// (not a priority barrier), back at the head of the channel, blocked or
// not: a receiver that stopped before it consumed e leaves it to the one
// that takes its place. It waits for no room, and taking e again
// returns no credit, as the first take did.
func (g *Gate) Unpoll(ch int, e Element) {
	g.mu.Lock()
	q := &g.queues[ch]
	if q.n == len(q.elems) {
		q.grow()
	}
	q.head = (q.head + len(q.elems) - 1) % len(q.elems)
	q.elems[q.head] = e
	q.n++
	q.extra++ // counted as the replayed backlog is: outside the capacity, without credit
	g.mu.Unlock()
	g.signal()
}

// Ready is signalled after a Send to an unblocked channel (to any channel
// while Watch is on) and after Unblock.
// A receiver waits on it only after Poll reported nothing; a signal may be
// stale, so the receiver polls again after waking.
func (g *Gate) Ready() <-chan struct{} { return g.ready }

// Watch makes every element sent signal Ready while on, on a blocked
// channel too: a receiver that takes its channels in an order of its own
// (PollChannel), blocked or not, waits for any of them.
func (g *Gate) Watch(on bool) {
	g.mu.Lock()
	g.watch = on
	g.mu.Unlock()
}

// Block stops Poll from returning elements of channel ch.
func (g *Gate) Block(ch int) {
	g.mu.Lock()
	g.queues[ch].blocked = true
	g.mu.Unlock()
}

// Unblock lets Poll return elements of channel ch again.
func (g *Gate) Unblock(ch int) {
	g.mu.Lock()
	g.queues[ch].blocked = false
	g.mu.Unlock()
	g.signal()
}

// Snapshot returns a copy of the elements queued on channel ch, oldest
// first, without removing them. Data buffers are shared, not copied; the
// caller must encode them before the receiver consumes and recycles them.
func (g *Gate) Snapshot(ch int) []Element {
	g.mu.Lock()
	defer g.mu.Unlock()
	q := &g.queues[ch]
	out := make([]Element, q.n)
	for i := 0; i < q.n; i++ {
		out[i] = q.elems[(q.head+i)%len(q.elems)]
	}
	return out
}

// Drain removes every queued element and returns data buffers to the pool.
// It is used when a task is torn down.
func (g *Gate) Drain() {
	g.mu.Lock()
	taken := g.drainLocked()
	g.mu.Unlock()
	g.credit(taken)
}

// Discard drains the gate and makes it drop whatever is sent to it from
// now on, until Reset: the receiver failed, and its senders must neither
// block on it nor fill it. What they send is in their retained output.
func (g *Gate) Discard() {
	g.mu.Lock()
	g.discard = true
	taken := g.drainLocked()
	g.mu.Unlock()
	g.credit(taken)
}

// Reset drains the gate, unblocks every channel and ends Discard, for a
// restarted receiver.
func (g *Gate) Reset() {
	g.mu.Lock()
	g.discard = false
	taken := g.drainLocked()
	for c := range g.queues {
		g.queues[c].blocked = false
	}
	g.mu.Unlock()
	g.credit(taken)
	g.signal()
}

// drainLocked empties every queue. It returns, per channel, the elements
// removed that a remote sender spent credit on (nil if none), for credit.
func (g *Gate) drainLocked() (taken []int) {
	g.prio = nil
	for c := range g.queues {
		q := &g.queues[c]
		credited := -q.extra // replayed elements carry no credit
		for q.n > 0 {
			e := q.elems[q.head]
			q.elems[q.head] = Element{}
			if e.Buf != nil {
				PutBuffer(e.Buf)
			}
			if e.Kind != Marker {
				credited++
			}
			q.head = (q.head + 1) % len(q.elems)
			q.n--
		}
		if credited > 0 && g.onTake != nil {
			if taken == nil {
				taken = make([]int, len(g.queues))
			}
			taken[c] = credited
		}
		q.extra = 0
		select {
		case q.space <- struct{}{}:
		default:
		}
	}
	return taken
}

// SendPriority delivers barrier e on channel ch ahead of the elements
// queued there: Poll returns it before any queued element, and a Marker
// takes its place in the channel's FIFO order. It never waits for room.
func (g *Gate) SendPriority(ch int, e Element) {
	g.mu.Lock()
	if g.discard {
		g.mu.Unlock()
		return
	}
	q := &g.queues[ch]
	if q.n == len(q.elems) { // more overtaking barriers than marker slots: grow
		q.grow()
	}
	q.elems[(q.head+q.n)%len(q.elems)] = Element{Kind: Marker, Checkpoint: e.Checkpoint}
	q.n++
	g.prio = append(g.prio, prioElement{ch, e})
	g.mu.Unlock()
	g.signal()
}

// AheadOfMarker returns copies of the data buffers queued on channel ch
// before the marker of checkpoint id: the records an overtaking barrier
// passed. The copies are the caller's. next is the sequence number after
// the last of those records, -1 when none is queued ahead.
func (g *Gate) AheadOfMarker(ch int, id int64) (bufs []*Buffer, next int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	q := &g.queues[ch]
	next = -1
	for i := 0; i < q.n; i++ {
		e := q.elems[(q.head+i)%len(q.elems)]
		if e.Kind == Marker && e.Checkpoint == id {
			break
		}
		if e.Kind == Data {
			bufs = append(bufs, e.Buf.Copy())
			next = max(next, e.Seq+int64(e.Buf.N))
		}
	}
	return bufs, next
}

// credit returns the credit of the elements drainLocked removed.
func (g *Gate) credit(taken []int) {
	for c, n := range taken {
		for range n {
			g.onTake(c)
		}
	}
}

// OnTake sets f to be called, on the receiver's goroutine and outside the
// gate's lock, after Poll removed an element that was sent with Send or
// Deliver (not a priority barrier or its marker) from channel ch. The
// network transport uses it to return flow-control credit to a remote
// sender. Set it before the gate is used.
func (g *Gate) OnTake(f func(ch int)) { g.onTake = f }

// Deliver appends e to channel ch without waiting for room. The network
// transport uses it for elements of a remote sender, whose credit already
// guarantees the room: the receiver granted one credit per free slot.
func (g *Gate) Deliver(ch int, e Element) {
	g.mu.Lock()
	if g.discard {
		g.mu.Unlock()
		if e.Buf != nil {
			PutBuffer(e.Buf)
		}
		if g.onTake != nil {
			g.onTake(ch) // the remote sender must not wait for a failed receiver
		}
		return
	}
	q := &g.queues[ch]
	if q.n == len(q.elems) {
		q.grow()
	}
	q.elems[(q.head+q.n)%len(q.elems)] = e
	q.n++
	wake := !q.blocked || g.watch
	g.mu.Unlock()
	if wake {
		g.signal()
	}
}

// DeliverReplay appends e to channel ch without waiting, beyond the
// channel's capacity: a sender replaying its retained output to a
// restarted receiver hands it over at once and goes on serving its other
// channels, while live sends on ch still wait for room. Replayed elements
// carry no credit: taking them returns none to a remote sender.
func (g *Gate) DeliverReplay(ch int, e Element) {
	g.mu.Lock()
	if g.discard {
		g.mu.Unlock()
		if e.Buf != nil {
			PutBuffer(e.Buf)
		}
		return
	}
	q := &g.queues[ch]
	if q.n == len(q.elems) {
		q.grow()
	}
	q.elems[(q.head+q.n)%len(q.elems)] = e
	q.n++
	q.extra++
	wake := !q.blocked || g.watch
	g.mu.Unlock()
	if wake {
		g.signal()
	}
}

// take removes the queue's first element and wakes a sender waiting for
// room; the queue is not empty. The gate's lock is held.
func (q *queue) take(capacity int) (e Element, credit bool) {
	e = q.elems[q.head]
	q.elems[q.head] = Element{}
	q.head = (q.head + 1) % len(q.elems)
	wasFull := q.n-q.extra == capacity
	q.n--
	if q.extra > 0 {
		// Count the removal against the replayed backlog first: live
		// senders get room (and remote ones credit) once it is consumed.
		q.extra--
		return e, false
	}
	if wasFull {
		select {
		case q.space <- struct{}{}:
		default:
		}
	}
	return e, true
}

func (q *queue) grow() {
	grown := make([]Element, len(q.elems)*2)
	for i := 0; i < q.n; i++ {
		grown[i] = q.elems[(q.head+i)%len(q.elems)]
	}
	q.elems, q.head = grown, 0
}

// Sender is the sending end of a channel whose receiver lives in another
// process. It behaves as Gate.SendTimed and Gate.SendPriority do: SendTimed
// waits while the receiver has no room (no credit), SendPriority never
// waits. After SendTimed or SendReplay returns nil the caller's use of
// e.Buf has passed on (the sender returns the buffer with PutBuffer once
// it wrote it out).
type Sender interface {
	SendTimed(ctx context.Context, e Element) (time.Duration, error)
	// SendReplay sends e, part of a replay to a restarted receiver,
	// without credit: the receiver queues it beyond its capacity (see
	// Gate.DeliverReplay), so that the sender does not wait while the
	// receiver works through its backlog.
	SendReplay(ctx context.Context, e Element) error
	SendPriority(e Element)
}

// Channel is the sending end of one gate channel: Index of Gate in this
// process, or Remote when the receiver is in another process.
type Channel struct {
	Gate   *Gate
	Index  int
	Remote Sender
}

// Send sends e on the channel; see Gate.Send.
func (c Channel) Send(ctx context.Context, e Element) error {
	_, err := c.SendTimed(ctx, e)
	return err
}

// SendTimed sends e and reports the time spent waiting; see Gate.SendTimed.
func (c Channel) SendTimed(ctx context.Context, e Element) (time.Duration, error) {
	if c.Remote != nil {
		return c.Remote.SendTimed(ctx, e)
	}
	return c.Gate.SendTimed(ctx, c.Index, e)
}

// Replay hands e over without waiting for room: to a local gate with
// Gate.DeliverReplay, to a remote one with Sender.SendReplay. As with a
// send, the receiver gets the caller's use of e.Buf: a sender that keeps
// the buffer retains it for the receiver first (Buffer.Retain).
func (c Channel) Replay(ctx context.Context, e Element) error {
	if c.Remote != nil {
		return c.Remote.SendReplay(ctx, e)
	}
	c.Gate.DeliverReplay(c.Index, e)
	return nil
}

// SendPriority sends barrier e ahead of the queued elements; see
// Gate.SendPriority.
func (c Channel) SendPriority(e Element) {
	if c.Remote != nil {
		c.Remote.SendPriority(e)
		return
	}
	c.Gate.SendPriority(c.Index, e)
}

// ChannelStatus is what a gate channel holds and whether it moves: for
// reports of what a stalled job waits on.
type ChannelStatus struct {
	// Queued is the number of elements queued, Replayed of them beyond
	// the capacity (see DeliverReplay).
	Queued, Replayed int
	// Blocked: the receiver does not consume the channel (alignment).
	Blocked bool
	// SenderWaiting: its sender waits in Send for room.
	SenderWaiting bool
}

// Status returns the state of every channel, for diagnostics.
func (g *Gate) Status() []ChannelStatus {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]ChannelStatus, len(g.queues))
	for c := range g.queues {
		q := &g.queues[c]
		out[c] = ChannelStatus{Queued: q.n, Replayed: q.extra, Blocked: q.blocked, SenderWaiting: q.waiting}
	}
	return out
}

// Fill returns how full the gate's queues are, from 0 (empty) to 1 (every
// channel at capacity): a measure of backpressure on the task's senders.
func (g *Gate) Fill() float64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queues) == 0 {
		return 0
	}
	n := 0
	for i := range g.queues {
		n += min(g.queues[i].n-g.queues[i].extra, g.capacity)
	}
	return float64(n) / float64(len(g.queues)*g.capacity)
}
