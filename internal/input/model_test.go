package input

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestRandomInterleavingsDeliverEachRecordOnceAndConsistentSnapshots
// drives the protocol with random interleavings of per-channel FIFO
// streams (records, watermarks, idleness, latency markers, barriers that
// some senders skip, the end), in every checkpoint mode, with random
// aborts, aligned timeouts, snapshots the shell fails to take and
// periods of catching up. A fake shell carries the actions out over
// simulated queues, and checks:
//   - each channel's records are delivered exactly once, in order;
//   - every reported snapshot's counts are each channel's barrier
//     position (at least that, at least once), or its end, and its
//     in-flight input is exactly the records between the counts at the
//     snapshot and those positions;
//   - a checkpoint whose barriers are MustAlign (every third one, in
//     order in every mode) has no in-flight input, whatever the mode and
//     the aligned timeouts, and sends its barrier on MustAlign;
//   - every Snapshot ends with exactly one Report or DropSnapshot;
//   - blocks and unblocks alternate, nothing stays blocked without an
//     open alignment, and the input watermark only grows;
//   - the subtask finishes once every channel ended, never fails.
func TestRandomInterleavingsDeliverEachRecordOnceAndConsistentSnapshots(t *testing.T) {
	for seed := range uint64(400) {
		for _, mode := range []Mode{Aligned, Unaligned, AtLeastOnce} {
			m := newModel(t, seed, mode)
			m.run()
			if t.Failed() {
				t.Fatalf("seed %d, mode %v failed; the last steps:\n%s", seed, mode, strings.Join(m.trace, "\n"))
			}
		}
	}
}

// mustAlign says whether the model's checkpoint id must be aligned (a
// savepoint's): every third one.
func mustAlign(id int64) bool { return id%3 == 0 }

// sender is the sending side of one channel.
type sender struct {
	total   int64 // records it sends
	sent    int64
	barrier int64 // the last checkpoint it considered
	wm      int64
	ended   bool
}

// queued is an element in a simulated channel queue; a marker holds the
// place of an overtaking barrier.
type queued struct {
	e      Element
	marker bool
}

type model struct {
	t    *testing.T
	rnd  *rand.Rand
	mode Mode
	p    *Protocol

	senders   []sender
	queues    [][]queued
	prio      []queued // overtaking barriers, with their channel in e.N
	triggered int64    // the newest checkpoint the senders may send

	chanWM    []int64 // per channel: its watermark and state, as stepped
	chanState []ChannelState
	idle      bool // GoIdle without GoActive since

	delivered []int64 // per channel: the next record expected
	ended     []bool  // End stepped
	blocked   []bool
	behind    bool
	wm        int64
	finished  bool

	barrierAt map[int64]map[int]int64 // per checkpoint, per channel: the barrier's position
	snapshots map[int64][]int64       // counts at Snapshot
	inflight  map[int64][]int64       // per checkpoint: the next in-flight record expected per channel
	open      map[int64]bool          // Snapshot without Report or DropSnapshot yet
	done      map[int64]bool
	failed    map[int64]bool // Snapshot the shell failed to take
	aligning  int64
	trace     []string
}

func newModel(t *testing.T, seed uint64, mode Mode) *model {
	rnd := rand.New(rand.NewPCG(seed, uint64(mode)))
	n := 1 + rnd.IntN(4)
	p, err := New(Config{Channels: n, Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	m := &model{t: t, rnd: rnd, mode: mode, p: p, senders: make([]sender, n), queues: make([][]queued, n),
		chanWM: make([]int64, n), chanState: make([]ChannelState, n),
		delivered: make([]int64, n), ended: make([]bool, n), blocked: make([]bool, n), wm: MinWatermark,
		barrierAt: map[int64]map[int]int64{}, snapshots: map[int64][]int64{}, inflight: map[int64][]int64{},
		open: map[int64]bool{}, done: map[int64]bool{}, failed: map[int64]bool{}}
	for c := range m.senders {
		m.senders[c] = sender{total: rnd.Int64N(40), wm: MinWatermark}
		m.chanWM[c] = MinWatermark
	}
	return m
}

func (m *model) errorf(format string, args ...any) {
	m.t.Helper()
	m.t.Errorf(format, args...)
}

func (m *model) run() {
	for step := 0; !m.finished && !m.t.Failed(); step++ {
		if step > 100000 {
			m.errorf("no end after %d steps", step)
			return
		}
		switch r := m.rnd.IntN(100); {
		case r < 40:
			m.send(m.rnd.IntN(len(m.senders)))
		case r < 85:
			if !m.poll() && m.allSent() {
				m.errorf("stuck: every sender is done, nothing to read (blocked %v, queues %d)", m.blocked, m.queueLens())
				return
			}
		case r < 90:
			m.triggered++
		case r < 93:
			if m.triggered > 0 {
				id := 1 + m.rnd.Int64N(m.triggered)
				m.apply(fmt.Sprintf("abort %d", id), m.p.Abort(id))
			}
		case r < 96:
			if m.aligning != 0 {
				m.apply(fmt.Sprintf("timeout %d", m.aligning), m.p.AlignedTimeout(m.aligning))
			}
		default:
			m.behind = !m.behind
			m.trace = append(m.trace, fmt.Sprintf("catching-up %v", m.behind))
			m.p.CatchingUp(m.behind)
		}
	}
	if m.finished && !m.t.Failed() {
		// A finished subtask's final snapshot, without a barrier.
		m.behind = false
		m.p.CatchingUp(false)
		m.triggered++
		m.apply(fmt.Sprintf("trigger %d", m.triggered), m.p.Trigger(m.triggered))
		if !m.done[m.triggered] && !m.failed[m.triggered] {
			m.errorf("the trigger of checkpoint %d after the end reported nothing", m.triggered)
		}
	}
	for id := range m.open {
		m.errorf("checkpoint %d: a Snapshot without Report or DropSnapshot at the end", id)
	}
}

func (m *model) allSent() bool {
	for _, s := range m.senders {
		if !s.ended {
			return false
		}
	}
	return len(m.prio) == 0
}

func (m *model) queueLens() []int {
	var out []int
	for _, q := range m.queues {
		out = append(out, len(q))
	}
	return out
}

// send makes channel c's sender send its next element.
func (m *model) send(c int) {
	s := &m.senders[c]
	if s.ended {
		return
	}
	if s.barrier < m.triggered && m.rnd.IntN(2) == 0 {
		s.barrier++
		if m.rnd.IntN(5) == 0 {
			return // it declined that checkpoint: no barrier
		}
		if m.barrierAt[s.barrier] == nil {
			m.barrierAt[s.barrier] = map[int]int64{}
		}
		m.barrierAt[s.barrier][c] = s.sent
		b := Element{Kind: Barrier, Checkpoint: s.barrier, Seq: s.sent, MustAlign: mustAlign(s.barrier)}
		if m.mode == Unaligned && !b.MustAlign {
			b.Unaligned = true
			m.queues[c] = append(m.queues[c], queued{e: b, marker: true})
			b.N = c // the channel, for the model only
			m.prio = append(m.prio, queued{e: b})
			return
		}
		m.queues[c] = append(m.queues[c], queued{e: b})
		return
	}
	var e Element
	switch r := m.rnd.IntN(10); {
	case s.sent < s.total && r < 6:
		n := min(1+m.rnd.Int64N(5), s.total-s.sent)
		e = Element{Kind: Data, Seq: s.sent, N: int(n)}
		s.sent += n
	case r < 8:
		s.wm += 1 + m.rnd.Int64N(3)
		if s.wm < 0 {
			s.wm = 0
		}
		e = Element{Kind: Watermark, Time: s.wm}
	case r < 9:
		e = Element{Kind: Idle}
	case s.sent == s.total:
		e = Element{Kind: End}
		s.ended = true
	default:
		e = Element{Kind: Latency}
	}
	m.queues[c] = append(m.queues[c], queued{e: e})
}

// poll steps one element as the shell would: an overtaking barrier
// first, else the head of a random unblocked channel. It reports whether
// there was one.
func (m *model) poll() bool {
	if len(m.prio) > 0 {
		q := m.prio[0]
		m.prio = m.prio[1:]
		c := q.e.N
		q.e.N = 0
		m.check(c, q.e)
		m.apply(fmt.Sprintf("step ch=%d %v", c, q.e), m.p.Step(c, q.e))
		return true
	}
	var ready []int
	for c, q := range m.queues {
		if len(q) > 0 && !m.blocked[c] {
			ready = append(ready, c)
		}
	}
	if len(ready) == 0 {
		return false
	}
	if ch, only := m.p.Next(); only {
		m.errorf("Next names channel %d without a logged order or a held batch", ch)
	}
	c := ready[m.rnd.IntN(len(ready))]
	q := m.queues[c][0]
	m.queues[c] = m.queues[c][1:]
	if q.marker {
		return true
	}
	m.check(c, q.e)
	if q.e.Kind == End {
		m.ended[c] = true
	}
	before := m.wm
	m.apply(fmt.Sprintf("step ch=%d %v", c, q.e), m.p.Step(c, q.e))
	m.checkWatermark(c, q.e, before)
	return true
}

// checkWatermark follows channel c's watermark and state through element
// e and checks the input watermark where it is combined: the minimum over
// the active channels, or with none active the highest of those that
// have not ended, never lower than before (the watermark before e); and
// the subtask is idle exactly when no channel is active.
func (m *model) checkWatermark(c int, e Element, before int64) {
	switch e.Kind {
	case Data:
		if m.chanState[c] == ChanIdle {
			m.chanState[c] = ChanActive
		}
		return
	case Watermark:
		m.chanWM[c] = max(m.chanWM[c], e.Time)
		if m.chanState[c] == ChanIdle {
			m.chanState[c] = ChanActive
		}
	case Idle:
		if m.chanState[c] == ChanActive {
			m.chanState[c] = ChanIdle
		}
	case End:
		m.chanState[c] = ChanEnded
	default:
		return
	}
	if m.finished {
		return
	}
	low, high, active := MaxWatermark, MinWatermark, false
	for i, st := range m.chanState {
		switch st {
		case ChanActive:
			active, low = true, min(low, m.chanWM[i])
		case ChanIdle:
			high = max(high, m.chanWM[i])
		}
	}
	want := low
	if !active {
		want = high
	}
	if got, _ := m.p.Watermark(); got != max(want, before) || got != m.wm {
		m.errorf("input watermark %d (advanced to %d), want %d from channels %v %v", got, m.wm, max(want, before), m.chanWM, m.chanState)
	}
	if m.idle == active {
		m.errorf("idle=%v with channels %v", m.idle, m.chanState)
	}
}

// check checks that element e is one the shell may read from c.
func (m *model) check(c int, e Element) {
	if m.finished {
		m.errorf("channel %d: %v read after Finish", c, e.Kind)
	}
}

// apply carries out actions as the shell would and checks them.
func (m *model) apply(what string, actions []Action) {
	m.trace = append(m.trace, what)
	if len(m.trace) > 40 {
		m.trace = m.trace[1:]
	}
	var failedNow []int64
	for _, a := range actions {
		m.trace = append(m.trace, "  "+a.String())
		if m.failed[a.Checkpoint] && (a.Kind == KeepQueued || a.Kind == Report || a.Kind == DropSnapshot) {
			continue // ignored, as the contract says
		}
		switch a.Kind {
		case Deliver:
			m.deliver(a)
		case Discard:
			m.errorf("channel %d: a batch discarded without duplicates or replays", a.Ch)
		case Block, Unblock:
			if m.blocked[a.Ch] == (a.Kind == Block) {
				m.errorf("%v of channel %d, blocked=%v", a.Kind, a.Ch, m.blocked[a.Ch])
			}
			m.blocked[a.Ch] = a.Kind == Block
		case GoIdle, GoActive:
			if m.idle == (a.Kind == GoIdle) {
				m.errorf("%v while idle=%v", a.Kind, m.idle)
			}
			m.idle = a.Kind == GoIdle
		case Advance:
			if a.Watermark <= m.wm {
				m.errorf("the watermark went from %d to %d", m.wm, a.Watermark)
			}
			m.wm = a.Watermark
		case Align:
			m.aligning = a.Checkpoint
		case Snapshot:
			failedNow = append(failedNow, m.snapshot(a)...)
		case KeepQueued:
			m.keepQueued(a)
		case Report:
			m.report(a)
		case DropSnapshot:
			if !m.open[a.Checkpoint] {
				m.errorf("DropSnapshot %d without an open Snapshot", a.Checkpoint)
			}
			delete(m.open, a.Checkpoint)
		case Decline:
			if !m.behind {
				m.errorf("checkpoint %d declined while not catching up", a.Checkpoint)
			}
		case Fail:
			m.errorf("failed: %v", a.Err)
		case Finish:
			for c, e := range m.ended {
				if !e {
					m.errorf("finished before channel %d ended", c)
				}
			}
			if m.wm != MaxWatermark {
				m.errorf("finished at watermark %d", m.wm)
			}
			if st := m.p.Status(); st.Aligning != 0 {
				m.errorf("finished with the alignment of checkpoint %d open", st.Aligning)
			}
			m.finished = true
		case RequestReplay, ReplayStarted:
			m.errorf("%v without a restart", a.Kind)
		}
	}
	for _, id := range failedNow {
		m.apply(fmt.Sprintf("snapshot-failed %d", id), m.p.SnapshotFailed(id))
	}
	if st := m.p.Status(); st.Aligning == 0 {
		m.aligning = 0
		if len(st.Blocked) > 0 || slices.Contains(m.blocked, true) {
			m.errorf("channels blocked (%v) without an alignment", st.Blocked)
		}
	}
}

func (m *model) deliver(a Action) {
	if a.From != m.delivered[a.Ch] || a.To <= a.From || a.To-a.From != int64(a.Limit-a.Skip) {
		m.errorf("channel %d: delivered records [%d,%d), want from %d on", a.Ch, a.From, a.To, m.delivered[a.Ch])
	}
	if a.Hold || a.Duplicates > 0 {
		m.errorf("channel %d: a batch held or with duplicates without a restart", a.Ch)
	}
	m.delivered[a.Ch] = a.To
	if a.InFlight && !m.failed[a.Checkpoint] {
		m.addInflight(a.Checkpoint, a.Ch, a.From, a.To)
	}
}

func (m *model) addInflight(id int64, c int, from, to int64) {
	next := m.inflight[id]
	if next == nil || !m.open[id] {
		m.errorf("checkpoint %d: in-flight records of channel %d without an open snapshot", id, c)
		return
	}
	if from != next[c] {
		m.errorf("checkpoint %d: in-flight records [%d,%d) of channel %d, want from %d", id, from, to, c, next[c])
	}
	next[c] = to
}

func (m *model) snapshot(a Action) (failed []int64) {
	id := a.Checkpoint
	if m.snapshots[id] != nil || m.done[id] {
		m.errorf("a second Snapshot of checkpoint %d", id)
	}
	if m.behind {
		m.errorf("Snapshot %d while catching up", id)
	}
	if !slices.Equal(a.Counts, m.delivered) {
		m.errorf("Snapshot %d counts %v, delivered %v", id, a.Counts, m.delivered)
	}
	want := InOrder
	switch {
	case mustAlign(id):
		want = MustAlign
	case m.mode == Unaligned:
		want = Ahead
	}
	if m.finished {
		want = NoBarrier
	}
	if a.Forward != want {
		m.errorf("Snapshot %d forwards %v, want %v", id, a.Forward, want)
	}
	m.snapshots[id] = slices.Clone(a.Counts)
	m.inflight[id] = slices.Clone(a.Counts)
	m.open[id] = true
	if m.rnd.IntN(10) == 0 {
		// The shell could not take it: it ignores the checkpoint's
		// further actions and says so after them.
		delete(m.open, id)
		m.failed[id] = true
		return []int64{id}
	}
	return nil
}

func (m *model) keepQueued(a Action) {
	// The records queued ahead of the barrier's marker must be exactly
	// From to To-1.
	next := a.From
	for _, q := range m.queues[a.Ch] {
		if q.marker && q.e.Checkpoint == a.Checkpoint {
			break
		}
		if q.e.Kind == Data {
			if q.e.Seq != next {
				m.errorf("keep-queued %d ch=%d: queued batch at %d, want %d", a.Checkpoint, a.Ch, q.e.Seq, next)
			}
			next = q.e.Seq + int64(q.e.N)
		}
	}
	if next != a.To {
		m.errorf("keep-queued %d ch=%d [%d,%d): the queue holds records up to %d ahead of the marker", a.Checkpoint, a.Ch, a.From, a.To, next)
	}
	m.addInflight(a.Checkpoint, a.Ch, a.From, a.To)
}

func (m *model) report(a Action) {
	id := a.Checkpoint
	if !m.open[id] {
		m.errorf("Report %d without an open Snapshot", id)
		return
	}
	delete(m.open, id)
	m.done[id] = true
	if !slices.Equal(a.Counts, m.inflight[id]) {
		m.errorf("Report %d counts %v, but the snapshot %v and its in-flight records reach %v", id, a.Counts, m.snapshots[id], m.inflight[id])
	}
	if mustAlign(id) && !slices.Equal(a.Counts, m.snapshots[id]) {
		m.errorf("Report %d of a checkpoint that must align has in-flight input: counts %v, snapshot %v", id, a.Counts, m.snapshots[id])
	}
	for c, n := range a.Counts {
		// The barrier of a reported checkpoint was read on every channel
		// that sent it: before the channel's end, and an overtaking one
		// before anything queued.
		if pos, ok := m.barrierAt[id][c]; ok {
			if m.mode == AtLeastOnce && n >= pos {
				continue // records after the barrier may be in the snapshot
			}
			if n != pos {
				m.errorf("Report %d: channel %d counts %d, its barrier came after %d", id, c, n, pos)
			}
			continue
		}
		if !m.ended[c] || n != m.senders[c].total {
			m.errorf("Report %d: channel %d counts %d without a barrier (ended %v, %d records)", id, c, n, m.ended[c], m.senders[c].total)
		}
	}
}
