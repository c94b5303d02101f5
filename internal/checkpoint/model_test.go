package checkpoint

import (
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weir-stream/weir/internal/dataflow"
)

// TestRandomRunsAgreeWithModel drives coordinators with random events and
// checks every output against a simple model of the protocol written
// independently of the coordinator: when a periodic trigger must (and may)
// happen, how each acknowledgement is classified and whether its handle is
// discarded, which handles Persist and Abort carry, that Complete IDs
// increase, that failures fail the job exactly when the model counts too
// many, and that every triggered checkpoint ends exactly once.
func TestRandomRunsAgreeWithModel(t *testing.T) {
	for seed := range uint64(300) {
		m := newModel(t, seed)
		for range 400 {
			m.step()
			if t.Failed() {
				t.Fatalf("seed %d failed", seed)
			}
		}
		m.drain()
		if t.Failed() {
			t.Fatalf("seed %d failed", seed)
		}
	}
}

type model struct {
	t   *testing.T
	rnd *rand.Rand
	cfg Config
	c   *Coordinator

	now, lastTrigger, lastEnd int64
	ended, running            bool
	nextID, lastCompleted     ID
	failures                  int

	triggered map[ID]int64 // trigger tick of every checkpoint
	accepted  map[ID]map[dataflow.SubtaskID]Handle
	persisted map[ID]bool
	stored    map[ID]bool // outstanding Persist: false; reported: true
	finished  map[ID]string
}

func newModel(t *testing.T, seed uint64) *model {
	rnd := rand.New(rand.NewPCG(seed, 0))
	tasks := []dataflow.SubtaskID{{Vertex: 0, Subtask: 0}, {Vertex: 0, Subtask: 1}, {Vertex: 1, Subtask: 0}}[:1+rnd.IntN(3)]
	cfg := Config{
		Tasks:             tasks,
		Sources:           tasks[:1],
		Interval:          rnd.Int64N(8),
		MinPause:          rnd.Int64N(5),
		MaxConcurrent:     1 + rnd.IntN(3),
		Timeout:           1 + rnd.Int64N(12),
		TolerableFailures: rnd.IntN(5) - 1,
		FirstID:           ID(1 + rnd.IntN(5)),
		History:           1 << 20, // the model never forgets
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &model{
		t: t, rnd: rnd, cfg: cfg, c: c, running: true, nextID: cfg.FirstID,
		triggered: map[ID]int64{}, accepted: map[ID]map[dataflow.SubtaskID]Handle{},
		persisted: map[ID]bool{}, stored: map[ID]bool{}, finished: map[ID]string{},
	}
}

func (m *model) inflight() int { return len(m.triggered) - len(m.finished) }

func (m *model) step() {
	switch r := m.rnd.IntN(100); {
	case r < 40:
		m.tick()
	case r < 75:
		m.ack()
	case r < 80:
		id := m.randomID()
		task := m.cfg.Tasks[m.rnd.IntN(len(m.cfg.Tasks))]
		_, pending := m.triggered[id]
		pending = pending && m.finished[id] == "" && !m.persisted[id]
		acts := m.c.Decline(id, task, "no")
		if pending {
			m.expectAbort(acts, id, ReasonDeclined)
		} else {
			m.expectNothing("Decline", acts)
		}
	case r < 90:
		// Any outstanding Persist, not necessarily the oldest.
		if out := m.outstanding(); len(out) > 0 {
			id := out[m.rnd.IntN(len(out))]
			m.stored[id] = true
			if m.rnd.IntN(3) == 0 {
				m.expectAbort(m.c.StoreFailed(id, errors.New("no")), id, ReasonStoreFailed)
			} else {
				m.expectStored(id, m.c.Stored(id))
			}
		}
	case r < 94:
		acts, err := m.c.TriggerNow()
		switch {
		case !m.running:
			m.check(errors.Is(err, ErrNotRunning), "TriggerNow while stopped: %v", err)
		case m.inflight() >= m.cfg.MaxConcurrent:
			m.check(errors.Is(err, ErrTooManyConcurrent), "TriggerNow at max concurrent: %v", err)
		default:
			m.check(err == nil && len(acts) == 1, "TriggerNow: %v %v", acts, err)
			m.apply(acts)
		}
	case r < 97:
		m.jobFailed(m.c.JobFailed())
	default:
		m.c.Resume()
		if !m.running {
			m.running, m.failures, m.lastTrigger = true, 0, m.now
		}
	}
}

func (m *model) tick() {
	acts := m.c.Tick()
	m.now++
	// Expected timeouts first, by increasing ID; the coordinator may fail the
	// job on the way, which apply checks.
	m.apply(acts)
	for id, at := range m.triggered {
		if m.finished[id] == "" && !m.persisted[id] {
			m.check(m.now-at < m.cfg.Timeout, "checkpoint %d pending past its timeout", id)
		}
	}
	due := m.running && m.cfg.Interval > 0 && m.now >= m.lastTrigger+m.cfg.Interval &&
		m.inflight() < m.cfg.MaxConcurrent && (!m.ended || m.now >= m.lastEnd+m.cfg.MinPause)
	m.check(!due, "tick %d: a periodic trigger was due and allowed but not emitted: %v", m.now, acts)
}

func (m *model) randomID() ID {
	return m.cfg.FirstID - 1 + ID(m.rnd.IntN(int(m.nextID-m.cfg.FirstID)+2))
}

func (m *model) ack() {
	id := m.randomID()
	task := dataflow.SubtaskID{Vertex: m.rnd.IntN(3), Subtask: m.rnd.IntN(2)}
	// Mostly acknowledge what is pending, or checkpoints would rarely
	// complete.
	if pending := m.pending(); len(pending) > 0 && m.rnd.IntN(4) > 0 {
		id = pending[m.rnd.IntN(len(pending))]
		task = m.cfg.Tasks[m.rnd.IntN(len(m.cfg.Tasks))]
	}
	handle := Handle([]string{"a", "b"}[m.rnd.IntN(2)])
	expected := false
	for _, t := range m.cfg.Tasks {
		expected = expected || t == task
	}
	_, known := m.triggered[id]
	first, acked := m.accepted[id][task]
	var want AckResult
	discard := false
	switch {
	case !known:
		want = AckUnknown
	case !expected:
		want, discard = AckUnknown, true
	case m.finished[id] == "abort":
		want, discard = AckLate, true
	case acked:
		want, discard = AckDuplicate, m.finished[id] == "" && first != handle
	default:
		want = AckSuccess
		if m.accepted[id] == nil {
			m.accepted[id] = map[dataflow.SubtaskID]Handle{}
		}
		m.accepted[id][task] = handle
	}
	got, acts := m.c.Ack(id, task, handle)
	m.check(got == want, "Ack(%d, %v, %s) = %v, want %v", id, task, handle, got, want)
	if discard {
		m.check(len(acts) == 1 && acts[0] == Discard{ID: id, Task: task, Handle: handle},
			"Ack(%d, %v, %s): %v, want a Discard", id, task, handle, acts)
		return
	}
	if want == AckSuccess && len(m.accepted[id]) == len(m.cfg.Tasks) {
		m.check(len(acts) == 1, "Ack completing %d: %v, want one Persist", id, acts)
		m.apply(acts)
		return
	}
	m.expectNothing("Ack", acts)
}

func (m *model) expectNothing(call string, acts []Action) {
	m.check(len(acts) == 0, "%s: unexpected %v", call, acts)
}

func (m *model) expectAbort(acts []Action, id ID, reason Reason) {
	a, ok := first(acts).(Abort)
	m.check(ok && a.ID == id && a.Reason == reason, "want Abort %d %v first, got %v", id, reason, acts)
	m.apply(acts)
}

func (m *model) expectStored(id ID, acts []Action) {
	if id < m.lastCompleted {
		m.expectAbort(acts, id, ReasonSubsumed)
		return
	}
	m.check(first(acts) == Complete{ID: id}, "Stored(%d): %v, want Complete first", id, acts)
	m.apply(acts)
	for older := range m.triggered {
		if older < id && m.finished[older] == "" {
			m.check(m.persisted[older], "pending %d not subsumed by %d", older, id)
		}
	}
}

func (m *model) jobFailed(acts []Action) {
	m.running = false
	m.apply(acts)
	for id := range m.triggered {
		if m.finished[id] == "" {
			m.check(m.persisted[id], "pending %d survived a job failure", id)
		}
	}
}

func first(acts []Action) Action {
	if len(acts) == 0 {
		return nil
	}
	return acts[0]
}

// apply checks each action against the model and updates it.
func (m *model) apply(acts []Action) {
	for _, a := range acts {
		switch a := a.(type) {
		case Trigger:
			m.check(m.running, "%v while stopped", a)
			m.check(a.ID == m.nextID && a.Timestamp == m.now, "%v, want id %d at %d", a, m.nextID, m.now)
			m.triggered[a.ID] = m.now
			m.nextID++
			m.lastTrigger = m.now
			m.check(m.inflight() <= m.cfg.MaxConcurrent, "%v exceeds max concurrent", a)
		case Persist:
			m.check(!m.persisted[a.ID] && m.finished[a.ID] == "", "%v twice or after the end", a)
			m.check(maps.Equal(a.Handles, m.accepted[a.ID]) && len(a.Handles) == len(m.cfg.Tasks),
				"%v, want the accepted handles %v", a, m.accepted[a.ID])
			m.persisted[a.ID], m.stored[a.ID] = true, false
		case Complete:
			m.check(m.stored[a.ID] && m.finished[a.ID] == "", "%v before Stored or after the end", a)
			m.check(a.ID > m.lastCompleted, "%v after Complete %d", a, m.lastCompleted)
			m.end(a.ID, "complete")
			m.lastCompleted, m.failures = a.ID, 0
		case Abort:
			_, known := m.triggered[a.ID]
			m.check(known && m.finished[a.ID] == "", "%v of unknown or ended", a)
			m.check(maps.Equal(a.Handles, m.accepted[a.ID]), "%v, want handles %v", a, m.accepted[a.ID])
			if a.Reason == ReasonTimeout {
				m.check(m.now-m.triggered[a.ID] == m.cfg.Timeout, "%v at %d", a, m.now)
			}
			m.end(a.ID, "abort")
			if a.Reason.CountsAsFailure() && a.ID > m.lastCompleted {
				m.failures++
			}
		case FailJob:
			m.check(m.running && m.cfg.TolerableFailures >= 0 && m.failures == m.cfg.TolerableFailures+1,
				"%v with %d failures counted, %d tolerable", a, m.failures, m.cfg.TolerableFailures)
			m.running = false
		default:
			m.check(false, "unexpected %v", a)
		}
	}
	tooMany := m.cfg.TolerableFailures >= 0 && m.failures > m.cfg.TolerableFailures
	m.check(!m.running || !tooMany, "%d failures but the job still runs", m.failures)
	m.check(m.running == m.c.Running(), "running %v, want %v", m.c.Running(), m.running)
}

// pending returns the IDs of the checkpoints collecting acknowledgements.
func (m *model) pending() []ID {
	var ids []ID
	for id := range m.triggered {
		if m.finished[id] == "" && !m.persisted[id] {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// outstanding returns the IDs of Persists not yet answered, sorted so that
// a seed replays the same run.
func (m *model) outstanding() []ID {
	var ids []ID
	for id, done := range m.stored {
		if !done {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

func (m *model) end(id ID, how string) {
	m.finished[id] = how
	m.lastEnd, m.ended = m.now, true
}

// drain stops the job and answers every outstanding Persist; then every
// triggered checkpoint must have ended.
func (m *model) drain() {
	m.jobFailed(m.c.JobFailed())
	for _, id := range m.outstanding() {
		m.stored[id] = true
		m.expectStored(id, m.c.Stored(id))
	}
	for id := range m.triggered {
		m.check(m.finished[id] != "", "checkpoint %d never ended", id)
	}
	m.check(len(m.c.History()) == len(m.triggered), "history has %d, want %d", len(m.c.History()), len(m.triggered))
}

func (m *model) check(ok bool, format string, args ...any) {
	m.t.Helper()
	if !ok {
		m.t.Errorf(format, args...)
	}
}
