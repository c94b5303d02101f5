package task

import (
	"context"
	"fmt"
	"sync"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/standbylog"
)

// This file is active standby across processes (Options.StandbyElsewhere
// on the primaries' side, Options.PrimaryElsewhere on the standbys'). A primary's
// input log (standby.go) travels to its standby in another process as a
// stream of elements (ShipLog), which the standby's runtime appends to a
// log of its own (LogGate, pump); the standby applies it as a standby in
// the same process does. It sends nothing: its writers hold back what it
// emits, which its upstream backup retains. When the primary's process is
// lost, Promote makes the standby the subtask: it applies the rest of the
// log that reached it, asks its senders to replay from what it consumed
// (their retained output covers it), and sends the output its receivers
// lack from its retained output before it goes on.

// ErrLogLost is returned by ShipLog when the log no longer holds what
// the standby needs: it was dropped for its size, or restarted with its
// subtask.
var ErrLogLost = standbylog.ErrLost

// ShipLog prepares to send the input log of local subtask id, whose
// active standby runs in another process, from checkpoint from's mark on:
// from now on the log keeps what the returned function has not sent. That
// function sends the log through send (one element per entry, in order)
// until ctx ends or send fails. Both fail with ErrLogLost when the log
// does not reach back to from, or is dropped or restarted; the function
// then sends a last element that tells the standby to stop.
func (r *Runtime) ShipLog(id dataflow.SubtaskID, from int64) (func(ctx context.Context, send func(exchange.Element) error) error, error) {
	l := r.logs[id.Vertex][id.Subtask]
	if l == nil {
		return nil, fmt.Errorf("subtask %s keeps no input log", id)
	}
	return l.Ship(from)
}

// LogLost returns the element that stops a standby in another process:
// what ShipLog sends last when the log is lost, for a shipper that could
// not start (ShipLog failed) to send instead.
func LogLost() exchange.Element { return standbylog.LostElement() }

// LogGate returns the gate through which the input log of local subtask
// id's primary arrives (Options.PrimaryElsewhere), for the network transport to
// deliver into; nil for other subtasks.
func (r *Runtime) LogGate(id dataflow.SubtaskID) *exchange.Gate {
	if r.logGates == nil || r.logGates[id.Vertex] == nil {
		return nil
	}
	return r.logGates[id.Vertex][id.Subtask]
}

// pump appends what arrives on subtask id's log gate to its log, until
// the log's end or ctx ends. Marks become the log's marks, so that a
// completed checkpoint trims it.
func (r *Runtime) pump(ctx context.Context, id dataflow.SubtaskID) {
	g, l := r.logGates[id.Vertex][id.Subtask], r.logs[id.Vertex][id.Subtask]
	for {
		_, e, ok := g.Poll()
		if !ok {
			select {
			case <-g.Ready():
				continue
			case <-ctx.Done():
				return
			}
		}
		if e.Kind != exchange.Data {
			continue
		}
		more, err := l.Receive(e.Buf.Bytes())
		exchange.PutBuffer(e.Buf)
		if err != nil {
			r.opts.logf("the input log of subtask %s's primary: %v; its active standby stops", id, err)
		}
		if !more {
			return
		}
	}
}

// Promotion makes remote standbys (Options.PrimaryElsewhere) their subtasks, after
// their primaries' process was lost.
type Promotion struct {
	// Delivered holds, per output channel, the records the receivers hold
	// from the lost primary; the standby sends its retained output from
	// there on, and nothing before. On a channel it does not name (its
	// receiver was lost too, and restarts) the standby sends all it
	// retained.
	Delivered map[dataflow.Channel]int64
	// Aborted is the latest checkpoint triggered before the loss, which
	// the job aborted: the standby forwards no barrier up to it.
	Aborted int64
	// Incarnation numbers the promoted subtasks' replay requests.
	Incarnation int64
}

// Promote makes the standbys of the given local subtasks take their
// place: each applies the rest of the log that reached it, then reads its
// gate, asking its senders for replays. The returned channel is closed
// once each asked for its replays (or stopped). A subtask without a
// running standby fails.
func (r *Runtime) Promote(ids []dataflow.SubtaskID, p Promotion) (<-chan struct{}, error) {
	ready := make(chan struct{})
	r.mu.Lock()
	defer r.mu.Unlock()
	var sts []*standby
	for _, id := range ids {
		st := r.standbys[id]
		if st == nil || r.closed {
			return nil, fmt.Errorf("subtask %s has no active standby running", id)
		}
		sts = append(sts, st)
	}
	waiting := len(sts)
	if waiting == 0 {
		close(ready)
		return ready, nil
	}
	done := func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if waiting--; waiting == 0 {
			close(ready)
		}
	}
	for i, st := range sts {
		id := ids[i]
		delete(r.standbys, id)
		r.incarnations++
		if r.promoted == nil {
			r.promoted = map[dataflow.SubtaskID]bool{}
		}
		r.promoted[id] = true
		st.promoted, st.promotion = true, &p
		st.incarnation = p.Incarnation + r.incarnations
		st.ready = sync.OnceFunc(done)
		r.cancels[id.Vertex][id.Subtask] = st.cancel
		r.exited[id] = st.exited
		l := r.logs[id.Vertex][id.Subtask]
		l.PrimaryLost() // last: the standby takes over once it sees it
	}
	return ready, nil
}

// checkNotBehind fails a promoted standby of a task that merges inputs
// when a surviving receiver holds more of the lost primary's output than
// the standby produced from the whole log that reached it: the primary
// consumed input whose log entries were lost with it, in an order across
// its inputs the standby cannot know, so what the standby produces next
// need not be what the receiver holds. The failure falls back to a
// global rollback (the subtask's consumption order is lost). A task with
// one input regenerates its output whatever the lag.
func (s *subtask) checkNotBehind(p *Promotion) {
	if s.det == nil {
		return
	}
	for w, o := range s.outs {
		sent := o.Sent()
		for j, ch := range s.outCh[w] {
			if n, ok := p.Delivered[ch]; ok && n > sent[j] {
				Fail(fmt.Errorf("taking over from a lost primary: %w: a receiver holds %d records of channel %v from it, the standby produced %d in the order its log shows", ErrBackupLost, n, ch, sent[j]))
			}
		}
	}
}

// takeOverElsewhere is takeOver for a standby whose primary ran in a
// lost process: the gate it reads now drops what arrives until it asks
// for replays from what it consumed; its consumption order before is not
// logged here, so a restart of it falls back to a global rollback until
// a checkpoint completes; in-flight checkpoints are aborted; and its
// writers send what the receivers lack.
func (s *subtask) takeOverElsewhere(st *standby) {
	s.rt.mu.Lock()
	p := st.promotion
	s.incarnation = st.incarnation
	s.ready = st.ready
	s.rt.mu.Unlock()
	if s.det != nil {
		s.det.Forget()
	}
	if id := s.in.Aligning(); id != 0 && id <= p.Aborted {
		s.abortCheckpoint(id)
	}
	s.dropBarriers = p.Aborted
	s.checkNotBehind(p)
	defer func() {
		for _, c := range s.replays {
			s.replay(c)
		}
		s.replays = nil
	}()
	for w, o := range s.outs {
		from := make([]int64, len(s.outCh[w]))
		for j, ch := range s.outCh[w] {
			from[j] = -1
			if n, ok := p.Delivered[ch]; ok && n >= 0 {
				from[j] = n
			}
		}
		if err := o.sendFrom(from); err != nil {
			Fail(fmt.Errorf("taking over from a lost primary: %w", err))
		}
	}
}
