package task

import (
	"fmt"
	"strings"
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/input"
	"github.com/weir-stream/weir/internal/plan"
)

// This file answers "what does each subtask wait on?" for a job that
// stopped making progress: the engine's stall report and the test
// harness's watchdog print it.
//
// A subtask describes itself on its own goroutine, when it reads a report
// request from its inbox (it does so whenever it waits for input, for a
// log, for release, and on every step of a source), so that nothing on
// the hot path pays for it. One that does not answer is either blocked
// sending, which its receiver's gate shows (exchange.Gate.Status), or
// busy.

// SubtaskWait is what one subtask waits on.
type SubtaskWait struct {
	Subtask dataflow.SubtaskID
	Task    string
	// Standby marks the active standby of the subtask, not the subtask.
	Standby bool
	State   string
}

func (w SubtaskWait) String() string {
	who := fmt.Sprintf("subtask %s (%s)", w.Subtask, w.Task)
	if w.Standby {
		who = "active standby of " + who
	}
	return who + ": " + w.State
}

// Waits reports what every local subtask (and active standby) waits on.
// It asks each to describe itself and waits up to timeout for the
// answers; it never blocks a subtask.
func (r *Runtime) Waits(timeout time.Duration) []SubtaskWait {
	r.mu.Lock()
	down := make(map[dataflow.SubtaskID]bool, len(r.down))
	for id := range r.down {
		down[id] = true
	}
	exited := map[dataflow.SubtaskID]bool{}
	for id, ch := range r.exited {
		select {
		case <-ch:
			exited[id] = true
		default:
		}
	}
	standbys := make(map[dataflow.SubtaskID]chan control, len(r.standbys))
	for id, st := range r.standbys {
		standbys[id] = st.s.inbox // its own, or the subtask's where its primary runs elsewhere
	}
	promoted := make(map[dataflow.SubtaskID]bool, len(r.promoted))
	for id := range r.promoted {
		promoted[id] = true
	}
	r.mu.Unlock()

	blockedOn := r.blockedSenders()
	type asked struct {
		w     SubtaskWait
		reply chan string
	}
	var all []asked
	for _, v := range r.plan.Vertices {
		for i := range v.Parallelism {
			id := dataflow.SubtaskID{Vertex: v.ID, Subtask: i}
			if !r.IsLocal(id) {
				continue
			}
			// Where its primary runs in another process, only its
			// standby (or the standby promoted in its place) runs here.
			if !r.opts.PrimaryElsewhere || promoted[id] {
				a := asked{w: SubtaskWait{Subtask: id, Task: v.Name()}}
				if down[id] {
					a.w.State = "failed or stopped; waiting for the job to restart it"
				} else if exited[id] {
					a.w.State = "exited (released, or stopped with the attempt)"
				} else {
					a.reply = make(chan string, 1)
					r.ask(r.inboxes[v.ID][i], a.reply)
				}
				all = append(all, a)
			}
			if in, ok := standbys[id]; ok {
				b := asked{w: SubtaskWait{Subtask: id, Task: v.Name(), Standby: true}, reply: make(chan string, 1)}
				r.ask(in, b.reply)
				all = append(all, b)
			}
		}
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	expired := false
	out := make([]SubtaskWait, 0, len(all))
	for _, a := range all {
		if a.reply != nil && !expired {
			select {
			case a.w.State = <-a.reply:
			case <-deadline.C:
				expired = true // the rest only if they answered already
			}
		}
		if a.reply != nil && a.w.State == "" {
			select {
			case a.w.State = <-a.reply:
			default:
			}
		}
		if a.w.State == "" {
			if to := blockedOn[a.w.Subtask]; len(to) > 0 && !a.w.Standby {
				a.w.State = "blocked sending to " + strings.Join(to, ", ") + " (its queue is full)"
			} else {
				a.w.State = "did not answer: busy, or blocked outside its input and output (a remote send, a sink, an operator)"
			}
		}
		out = append(out, a.w)
	}
	return out
}

// ask puts a report request into a subtask's inbox unless it is full.
func (r *Runtime) ask(inbox chan control, reply chan string) {
	select {
	case inbox <- control{kind: ctlReport, reply: reply}:
	default:
	}
}

// blockedSenders returns, per sending subtask, the receivers (in this
// runtime) whose queue from it is full while it waits to send.
func (r *Runtime) blockedSenders() map[dataflow.SubtaskID][]string {
	out := map[dataflow.SubtaskID][]string{}
	for _, v := range r.plan.Vertices {
		for i, g := range r.gates[v.ID] {
			if g == nil {
				continue
			}
			for c, st := range g.Status() {
				if !st.SenderWaiting {
					continue
				}
				if from, ok := r.channelSender(v.ID, i, c); ok {
					out[from] = append(out[from], fmt.Sprintf("subtask %s (%s)", dataflow.SubtaskID{Vertex: v.ID, Subtask: i}, v.Name()))
				}
			}
		}
	}
	return out
}

// channelSender returns the subtask that sends on gate channel c of
// subtask i of vertex v.
func (r *Runtime) channelSender(v, i, c int) (dataflow.SubtaskID, bool) {
	for _, e := range r.plan.Vertices[v].Inputs {
		off := r.offsets[e]
		if c >= off && c < off+e.Channels() {
			if e.Partitioning == plan.Forward {
				return dataflow.SubtaskID{Vertex: e.Source.ID, Subtask: i}, true
			}
			return dataflow.SubtaskID{Vertex: e.Source.ID, Subtask: c - off}, true
		}
	}
	return dataflow.SubtaskID{}, false
}

// answerReport describes what the subtask waits on, to reply.
func (s *subtask) answerReport(reply chan<- string) {
	select {
	case reply <- s.describeWait():
	default:
	}
}

// describeWait says, on the subtask's goroutine, what it waits on.
func (s *subtask) describeWait() string {
	var parts []string
	switch {
	case s.finished:
		last := s.lastCheckpoint
		if s.in != nil {
			last = s.in.Status().Last
		}
		return fmt.Sprintf("finished its input; waiting for the job to release it (its last checkpoint %d)", last)
	case s.standby != nil:
		parts = append(parts, fmt.Sprintf("applied %d entries of its primary's input log; waiting for more", s.standby.at))
	case s.source != nil:
		parts = append(parts, "reading its source")
		if s.catchUp != nil {
			parts = append(parts, fmt.Sprintf("catching up with the output of its previous incarnation (sent %v of %v) before it sends a barrier", s.sentCounts(), s.catchUp))
		}
		if s.deferred > s.lastCheckpoint {
			parts = append(parts, fmt.Sprintf("checkpoint %d deferred until then", s.deferred))
		}
	}
	var st input.Status
	if s.in != nil {
		st = s.in.Status()
	}
	if len(st.Replays) > 0 {
		var from []string
		for _, c := range st.Replays {
			from = append(from, s.chanName(c))
		}
		parts = append(parts, "waiting for the replay from "+strings.Join(from, ", "))
	}
	if len(st.Follow) > 0 {
		d := st.Follow[0]
		parts = append(parts, fmt.Sprintf("repeating its logged input order (%d steps left): waiting for records up to %d from %s, consumed %d",
			len(st.Follow), d.UpTo, s.chanName(d.Ch), s.in.Consumed(d.Ch)))
		if s.stash.n > 0 {
			parts = append(parts, fmt.Sprintf("holding %d elements (%d bytes) of its other channels meanwhile", s.stash.n, s.stash.bytes))
		}
	}
	if st.Aligning != 0 {
		var missing []string
		for _, c := range st.Missing {
			missing = append(missing, s.chanName(c))
		}
		waited := ""
		if s.alignID == st.Aligning {
			waited = fmt.Sprintf(" for %v", s.rt.opts.Now().Sub(s.alignStart).Round(time.Millisecond))
		}
		parts = append(parts, fmt.Sprintf("aligning checkpoint %d%s: waiting for its barrier from %s",
			st.Aligning, waited, strings.Join(missing, ", ")))
	}
	ended := make(map[int]bool, len(st.Ended))
	for _, c := range st.Ended {
		ended[c] = true
	}
	if s.gate != nil && s.source == nil && !s.role.standby() {
		var chans []string
		for c, st := range s.gate.Status() {
			var notes []string
			if st.Queued > 0 {
				notes = append(notes, fmt.Sprintf("%d queued", st.Queued))
			}
			if st.Blocked {
				notes = append(notes, "blocked")
			}
			if st.SenderWaiting {
				notes = append(notes, "sender waits")
			}
			if ended[c] {
				notes = append(notes, "ended")
			}
			if len(notes) > 0 {
				chans = append(chans, s.chanName(c)+": "+strings.Join(notes, ", "))
			}
		}
		if len(parts) == 0 {
			parts = append(parts, "waiting for input")
		}
		if len(chans) > 0 {
			parts = append(parts, "channels: "+strings.Join(chans, "; "))
		}
	}
	if s.tctx.Metrics != nil {
		if h := s.tctx.Metrics.HeldBackBy.Load(); h >= 0 && int(h) < len(s.inChan) && s.inWM > dataflow.MinWatermark {
			parts = append(parts, fmt.Sprintf("watermark %d held back by %s", s.inWM, s.chanName(int(h))))
		}
	}
	return strings.Join(parts, "; ")
}

// chanName names gate channel c by its sender.
func (s *subtask) chanName(c int) string {
	if c < 0 || c >= len(s.inChan) {
		return fmt.Sprintf("channel %d", c)
	}
	ic := s.inChan[c]
	if ic.Edge >= len(s.rt.edges) {
		return fmt.Sprintf("channel %d", c)
	}
	e := s.rt.edges[ic.Edge]
	return fmt.Sprintf("subtask %s (%s)", dataflow.SubtaskID{Vertex: e.Source.ID, Subtask: ic.From}, e.Source.Name())
}
