package transport

import (
	"net"
	"time"
)

// This file is what lets an endpoint outlive its peers under upstream
// backup (SurviveLostPeers): a job that restarts single subtasks moves
// channels to a restarted subtask's new place and cuts those of a lost
// one.

// SurviveLostPeers makes the endpoint outlive its peers, for a job that
// restarts single subtasks (upstream backup): a broken connection no
// longer fails it. A channel to a lost receiver drops what is sent to it
// (the sender retains its output for replay) until Move points it at the
// receiver's replacement, or until a Replay element reconnects it; a
// channel from a lost sender waits for the sender's replacement to
// connect. A connection that broke while its sender lives on is not
// replaced by anyone: when grace has passed and its channels were neither
// severed (Sever) nor fed by a new connection, onStall (if set) is called
// from the transport's goroutine with those channels, (vertex, subtask,
// channel) each, for the job to restart their receivers. Call it right
// after Register.
func (ep *Endpoint) SurviveLostPeers(grace time.Duration, onStall func(chans [][3]int)) {
	ep.mu.Lock()
	ep.survive, ep.grace, ep.onStall = true, grace, onStall
	ep.mu.Unlock()
}

// Move points the channels to subtask (vertex, subtask) at its
// replacement, in the endpoint registered under key on addr, with fresh
// credit. What the old receiver did not take is the sender's to replay.
func (ep *Endpoint) Move(vertex, subtask int, addr, key string) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	var moving []*sender
	for _, p := range ep.peers {
		p.mu.Lock()
		for t, s := range p.senders {
			if t.vertex == int32(vertex) && t.subtask == int32(subtask) {
				moving = append(moving, s)
				delete(p.senders, t)
			}
		}
		p.mu.Unlock()
	}
	np := ep.peerLocked(peerKey{addr, key})
	for _, s := range moving {
		np.attach(s)
	}
}

// reconnect moves s to a fresh peer at the same place when its peer is
// lost: a replay starts on a working connection.
func (ep *Endpoint) reconnect(s *sender) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	old := s.p.Load()
	if !old.isLost() {
		return
	}
	old.mu.Lock()
	delete(old.senders, s.t)
	old.mu.Unlock()
	ep.peerLocked(peerKey{old.addr, old.key}).attach(s)
}

// Sever closes the connections that feed the given local gate channels
// ((vertex, subtask, channel) each): their sender was lost, and nothing
// more may arrive from it. It returns, per channel, where the last
// element delivered on it ended, the most over the sender's incarnations:
// at least the records the receiver holds from it (-1: nothing was
// delivered).
func (ep *Endpoint) Sever(chans [][3]int) []int64 {
	out := make([]int64, len(chans))
	var conns []net.Conn
	ep.mu.Lock()
	for i, c := range chans {
		t := target{int32(c[0]), int32(c[1]), int32(c[2])}
		out[i] = -1
		if n, ok := ep.delivered[t]; ok {
			out[i] = n
		}
		if in := ep.feeds[t]; in != nil {
			in.cut = true
			conns = append(conns, in.conn)
			delete(ep.feeds, t)
		}
	}
	ep.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	return out
}

// awaitReplacement waits the grace period after incoming connection in
// broke, then reports its channels that nobody took over (see
// SurviveLostPeers).
func (ep *Endpoint) awaitReplacement(in *incoming) {
	ep.mu.Lock()
	grace, onStall := ep.grace, ep.onStall
	ep.mu.Unlock()
	if onStall == nil {
		return
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ep.ctx.Done():
		return
	}
	var stalled [][3]int
	ep.mu.Lock()
	if !in.cut && !ep.closed {
		for t, f := range ep.feeds {
			if f == in && !in.ended[t] {
				stalled = append(stalled, [3]int{int(t.vertex), int(t.subtask), int(t.ch)})
			}
		}
	}
	ep.mu.Unlock()
	if len(stalled) > 0 {
		onStall(stalled)
	}
}
