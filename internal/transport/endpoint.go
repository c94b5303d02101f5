package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weir-stream/weir/internal/exchange"
)

// Endpoint is one attempt of a job on a node: the receiving side of the
// channels into its local subtasks and the sending side of the channels
// out of them.
type Endpoint struct {
	node     *Node
	key      string
	capacity int
	gate     func(vertex, subtask int) *exchange.Gate
	fail     func(error)
	ctx      context.Context
	cancel   context.CancelFunc

	mu        sync.Mutex
	peers     map[peerKey]*peer    // outgoing
	feeds     map[target]*incoming // which connection feeds each local channel
	delivered map[target]int64     // per local channel: where the latest element delivered ends (see Sever)
	inbound   map[*incoming]struct{}
	closed    bool
	survive   bool // see SurviveLostPeers
	grace     time.Duration
	onStall   func(chans [][3]int)
	wg        sync.WaitGroup
}

// peerKey names a receiving endpoint: the node's address and the
// endpoint's key there.
type peerKey struct{ addr, key string }

// Register creates the endpoint key on the node. gate returns the input
// gate of a local subtask (nil if the subtask is not local); capacity is
// the elements each gate channel holds, the credit a sender starts with.
// fail is called, at most once and from the transport's goroutines, when
// a connection of the endpoint breaks while the endpoint is open: the
// attempt cannot go on. The caller must call the endpoint's Credit from
// each local gate's OnTake and Close the endpoint when the attempt ends.
func (n *Node) Register(key string, capacity int, gate func(vertex, subtask int) *exchange.Gate, fail func(error)) (*Endpoint, error) {
	ctx, cancel := context.WithCancel(context.Background())
	ep := &Endpoint{node: n, key: key, capacity: capacity, gate: gate, ctx: ctx, cancel: cancel,
		peers: map[peerKey]*peer{}, feeds: map[target]*incoming{}, delivered: map[target]int64{}, inbound: map[*incoming]struct{}{}}
	var once sync.Once
	ep.fail = func(err error) { once.Do(func() { fail(err) }) }
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		cancel()
		return nil, ErrClosed
	}
	if _, dup := n.endpoints[key]; dup {
		cancel()
		return nil, fmt.Errorf("transport: endpoint %q registered twice", key)
	}
	n.endpoints[key] = ep
	n.notifyLocked()
	return ep, nil
}

// Close closes the endpoint's connections and waits for its goroutines.
// Sends on it fail with ErrClosed afterwards.
func (ep *Endpoint) Close() {
	ep.mu.Lock()
	if ep.closed {
		ep.mu.Unlock()
		return
	}
	ep.closed = true
	ep.cancel()
	for _, p := range ep.peers {
		p.close(ErrClosed)
	}
	for in := range ep.inbound {
		in.conn.Close()
	}
	ep.mu.Unlock()
	n := ep.node
	n.mu.Lock()
	if n.endpoints[ep.key] == ep {
		delete(n.endpoints, ep.key)
		if !n.closed {
			n.notifyLocked()
		}
	}
	n.mu.Unlock()
	ep.wg.Wait()
}

// Sender returns the sending end of gate channel ch of subtask (vertex,
// subtask), which runs in the process whose node listens on addr, in an
// endpoint registered under this endpoint's key.
func (ep *Endpoint) Sender(addr string, vertex, subtask, ch int) exchange.Sender {
	return ep.SenderTo(addr, ep.key, vertex, subtask, ch)
}

// SenderTo is Sender to the endpoint registered under key on addr.
func (ep *Endpoint) SenderTo(addr, key string, vertex, subtask, ch int) exchange.Sender {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	p := ep.peerLocked(peerKey{addr, key})
	t := target{int32(vertex), int32(subtask), int32(ch)}
	s := &sender{t: t, wake: make(chan struct{}, 1)}
	p.attach(s)
	return s
}

// peerLocked returns the usable peer for k, replacing a lost one.
func (ep *Endpoint) peerLocked(k peerKey) *peer {
	p := ep.peers[k]
	if p != nil && !p.isLost() {
		return p
	}
	p = &peer{ep: ep, addr: k.addr, key: k.key, senders: map[target]*sender{}, ready: make(chan struct{})}
	ep.peers[k] = p
	if ep.closed {
		p.close(ErrClosed)
	}
	return p
}

// Credit returns one unit of credit for gate channel ch of local subtask
// (vertex, subtask) to its remote sender. Call it from the gate's OnTake;
// it does nothing for channels fed from this process.
//
// Credit goes back in batches of half the capacity (creditBatch), one
// frame for several elements taken, which spares a write here and a
// wake-up of the sender's reader for each. It never holds back what the
// sender needs: a sender without credit has capacity elements queued,
// in flight or taken, and the receiver returns the credit once it took
// half of them.
func (ep *Endpoint) Credit(vertex, subtask, ch int) {
	t := target{int32(vertex), int32(subtask), int32(ch)}
	ep.mu.Lock()
	in := ep.feeds[t]
	ep.mu.Unlock()
	if in != nil {
		in.credit(t, ep.creditBatch())
	}
}

// creditBatch is how much credit a receiver returns at once: half its
// capacity, at least one.
func (ep *Endpoint) creditBatch() int { return max(1, ep.capacity/2) }

// incoming is a connection from a sending peer.
type incoming struct {
	conn  net.Conn
	node  *Node
	wmu   sync.Mutex
	buf   []byte
	owed  map[target]int  // credit taken and not yet returned; guarded by wmu
	ended map[target]bool // channels that delivered End; guarded by the endpoint's mu
	cut   bool            // severed (Sever); guarded by the endpoint's mu
}

// credit notes one element taken from channel t and returns the credit
// owed for t once it reaches batch.
func (in *incoming) credit(t target, batch int) {
	in.wmu.Lock()
	defer in.wmu.Unlock()
	n := in.owed[t] + 1
	if n < batch {
		in.owed[t] = n
		return
	}
	delete(in.owed, t)
	in.buf = appendCredit(in.buf[:0], t, n)
	in.node.bytes.Add(int64(len(in.buf)))
	in.conn.Write(in.buf) // a failed write means the sender is gone; its receiver fails the attempt
}

// receive delivers the elements of an incoming connection until it closes.
func (ep *Endpoint) receive(c net.Conn, fr *frameReader) {
	in := &incoming{conn: c, node: ep.node, owed: map[target]int{}, ended: map[target]bool{}}
	ep.mu.Lock()
	if ep.closed {
		ep.mu.Unlock()
		return
	}
	ep.inbound[in] = struct{}{}
	ep.wg.Add(1)
	ep.mu.Unlock()
	defer func() {
		ep.mu.Lock()
		delete(ep.inbound, in)
		ep.mu.Unlock()
		ep.wg.Done()
	}()
	err := ep.deliver(in, fr)
	ep.mu.Lock()
	closed, survive := ep.closed, ep.survive
	open := 0
	for t := range ep.feeds {
		if ep.feeds[t] == in && !in.ended[t] {
			open++
		}
	}
	ep.mu.Unlock()
	switch {
	case closed:
	case errors.Is(err, errCorrupt): // whatever else it sent cannot be trusted
		ep.fail(fmt.Errorf("data plane: connection from %s: %w", c.RemoteAddr(), err))
	case open == 0: // the sender finished every channel
	case survive:
		ep.awaitReplacement(in)
	default:
		ep.fail(fmt.Errorf("data plane: connection from %s broke with %d channels unfinished: %w", c.RemoteAddr(), open, err))
	}
}

func (ep *Endpoint) deliver(in *incoming, fr *frameReader) error {
	for {
		typ, n, err := fr.next()
		if err != nil {
			return err
		}
		if typ != frameElement && typ != frameCompressed {
			return fmt.Errorf("%w: type %d from a sender", errBadFrame, typ)
		}
		t, e, flags, err := fr.element(typ, n)
		if err != nil {
			return err
		}
		g := ep.gate(int(t.vertex), int(t.subtask))
		if g == nil || t.ch < 0 || int(t.ch) >= g.Channels() {
			return fmt.Errorf("%w: no local channel %d of subtask %d of task %d", errBadFrame, t.ch, t.subtask, t.vertex)
		}
		ep.mu.Lock()
		if in.cut {
			ep.mu.Unlock() // a severed sender's connection: nothing more from it
			if e.Buf != nil {
				exchange.PutBuffer(e.Buf)
			}
			continue
		}
		if ep.feeds[t] != in {
			ep.feeds[t] = in
		}
		if ep.survive { // Sever's counts
			end := e.Seq
			if e.Kind == exchange.Data {
				end += int64(e.Buf.N)
			}
			if e.Kind != exchange.Latency && e.Kind != exchange.Replay && end > ep.delivered[t] {
				ep.delivered[t] = end
			}
		}
		if e.Kind == exchange.End {
			in.ended[t] = true
		}
		ep.mu.Unlock()
		switch {
		case flags&flagPriority != 0:
			g.SendPriority(int(t.ch), e)
		case flags&flagReplay != 0:
			g.DeliverReplay(int(t.ch), e)
		default:
			g.Deliver(int(t.ch), e)
		}
	}
}

// peer is the connection to one receiving node, shared by all channels
// of the endpoint that lead there. It dials on the first send.
type peer struct {
	ep   *Endpoint
	addr string
	key  string // the receiving endpoint's

	dialOnce sync.Once
	ready    chan struct{} // closed once dialled (or failed)
	conn     net.Conn

	mu      sync.Mutex
	senders map[target]*sender
	err     error // sticky: the connection is unusable

	wmu sync.Mutex
	hdr []byte
	iov [2][]byte   // header and payload of the frame being written
	vec net.Buffers // iov, for one writev
}

func (p *peer) connect() error {
	p.dialOnce.Do(func() {
		defer close(p.ready)
		node := p.ep.node
		c, err := node.dial(p.ep.ctx, p.addr)
		var fr *frameReader
		if err == nil {
			fr = newFrameReader(c, nil)
			if err = greet(c, fr, node.cfg.Secret, p.key, node.cfg.DialTimeout); err != nil {
				err = fmt.Errorf("data plane: connecting to %s: %w", p.addr, err)
			}
		}
		p.mu.Lock()
		if err == nil && p.err != nil { // closed while dialling
			err = p.err
		}
		if err != nil {
			if c != nil {
				c.Close()
			}
			if p.err == nil {
				p.err = err
			}
			p.mu.Unlock()
			return
		}
		p.conn = c
		p.mu.Unlock()
		ep := p.ep
		ep.mu.Lock()
		if ep.closed { // Close may have missed the connection
			ep.mu.Unlock()
			p.close(ErrClosed)
			return
		}
		ep.wg.Add(1)
		ep.mu.Unlock()
		go p.readCredits(fr)
	})
	<-p.ready
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// readCredits applies the credit the receiver returns on the connection
// fr reads until it closes.
func (p *peer) readCredits(fr *frameReader) {
	defer p.ep.wg.Done()
	for {
		typ, n, err := fr.next()
		if err == nil && typ != frameCredit {
			err = fmt.Errorf("%w: type %d from a receiver", errBadFrame, typ)
		}
		var t target
		var k int
		if err == nil {
			t, k, err = fr.credit(n)
		}
		if err != nil {
			p.mu.Lock()
			closing := p.err != nil
			for _, s := range p.senders {
				closing = closing || !s.ended
			}
			done := p.err == nil && !closing
			p.mu.Unlock()
			if done {
				// Every channel to the peer ended: the receiver may close.
				p.close(ErrClosed)
				return
			}
			p.mu.Lock()
			first := p.err == nil
			p.mu.Unlock()
			if first {
				err = fmt.Errorf("data plane: connection to %s broke: %w", p.addr, err)
				p.close(err)
				if !p.ep.surviving() {
					p.ep.fail(err)
				}
			}
			return
		}
		p.mu.Lock()
		s := p.senders[t]
		if s != nil {
			s.credit += k
		}
		p.mu.Unlock()
		if s != nil {
			select {
			case s.wake <- struct{}{}:
			default:
			}
		}
	}
}

// attach makes s send through p, with a receiver's whole credit.
func (p *peer) attach(s *sender) {
	p.mu.Lock()
	s.credit = p.ep.capacity
	s.p.Store(p)
	p.senders[s.t] = s
	p.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// isLost reports whether the connection failed (rather than closed with
// its endpoint or after its last channel ended).
func (p *peer) isLost() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err != nil && !errors.Is(p.err, ErrClosed)
}

func (ep *Endpoint) surviving() bool {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return ep.survive
}

// close makes the peer unusable with err and wakes its waiting senders.
func (p *peer) close(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	c := p.conn
	for _, s := range p.senders {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	p.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// write sends one element frame, compressing a data element's batch
// when the node compresses (before it takes the connection, so that
// senders sharing it compress at the same time). The peer owns e.Buf
// afterwards.
func (p *peer) write(t target, e exchange.Element, flags byte) error {
	if err := p.connect(); err != nil {
		return err
	}
	node := p.ep.node
	typ := byte(frameElement)
	var payload []byte
	var z *[]byte
	if e.Buf != nil {
		payload = e.Buf.Bytes()
		node.batches.Add(1)
		node.recordBytes.Add(int64(len(payload)))
		if z = node.codecs.compress(payload); z != nil {
			typ, payload = frameCompressed, *z
			node.compressed.Add(1)
		}
	}
	p.wmu.Lock()
	p.hdr = appendElementHeader(p.hdr[:0], typ, t, e, flags, len(payload))
	size := len(p.hdr) + len(payload)
	p.iov = [2][]byte{p.hdr, payload}
	p.vec = p.iov[:]
	_, err := p.vec.WriteTo(p.conn)
	p.iov = [2][]byte{}
	p.wmu.Unlock()
	node.bytes.Add(int64(size))
	if z != nil {
		node.codecs.release(z)
	}
	if e.Buf != nil {
		exchange.PutBuffer(e.Buf)
	}
	if err != nil {
		err = fmt.Errorf("data plane: sending to %s: %w", p.addr, err)
		p.close(err)
		return err
	}
	return nil
}

// sender is one remote channel.
type sender struct {
	p      atomic.Pointer[peer] // changes with Move and reconnect
	t      target
	credit int  // guarded by p.mu
	ended  bool // End was sent; guarded by p.mu
	wake   chan struct{}
}

// SendTimed waits for credit, then sends e. Under SurviveLostPeers a
// lost receiver's channel drops e (and reports success), except a Replay
// element, which reconnects first.
func (s *sender) SendTimed(ctx context.Context, e exchange.Element) (time.Duration, error) {
	return s.send(ctx, e, true)
}

// SendReplay sends e, part of a replay, without credit; see SendTimed for
// a lost receiver.
func (s *sender) SendReplay(ctx context.Context, e exchange.Element) error {
	_, err := s.send(ctx, e, false)
	return err
}

func (s *sender) send(ctx context.Context, e exchange.Element, credit bool) (time.Duration, error) {
	var p *peer
	var start time.Time
	waited := func() time.Duration {
		if start.IsZero() {
			return 0
		}
		return time.Since(start)
	}
	for {
		p = s.p.Load()
		p.mu.Lock()
		if err := p.err; err != nil {
			p.mu.Unlock()
			if errors.Is(err, ErrClosed) || !p.ep.surviving() {
				return waited(), err
			}
			if e.Kind == exchange.Replay {
				p.ep.reconnect(s)
				continue
			}
			if e.Buf != nil {
				exchange.PutBuffer(e.Buf)
			}
			return waited(), nil
		}
		if !credit || s.credit > 0 {
			if credit {
				s.credit--
			}
			s.ended = s.ended || e.Kind == exchange.End
			p.mu.Unlock()
			break
		}
		p.mu.Unlock()
		if start.IsZero() {
			start = time.Now()
		}
		select {
		case <-s.wake:
		case <-ctx.Done():
			return waited(), ctx.Err()
		}
	}
	var flags byte
	if !credit {
		flags = flagReplay
	}
	err := p.write(s.t, e, flags)
	if err != nil && p.ep.surviving() && !errors.Is(err, ErrClosed) {
		return waited(), nil // lost with the receiver; the replay repeats it
	}
	return waited(), err
}

// SendPriority sends barrier e ahead of the receiver's queue, without
// credit. An error makes the peer unusable; the next SendTimed reports it.
func (s *sender) SendPriority(e exchange.Element) {
	s.p.Load().write(s.t, e, flagPriority)
}
