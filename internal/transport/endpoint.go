package transport

import (
	"context"
	"fmt"
	"net"
	"sync"
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

	mu      sync.Mutex
	peers   map[string]*peer     // outgoing, by address
	feeds   map[target]*incoming // which connection feeds each local channel
	inbound map[*incoming]struct{}
	closed  bool
	wg      sync.WaitGroup
}

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
		peers: map[string]*peer{}, feeds: map[target]*incoming{}, inbound: map[*incoming]struct{}{}}
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
// subtask), which runs in the process whose node listens on addr.
func (ep *Endpoint) Sender(addr string, vertex, subtask, ch int) exchange.Sender {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	p := ep.peers[addr]
	if p == nil {
		p = &peer{ep: ep, addr: addr, senders: map[target]*sender{}, ready: make(chan struct{})}
		ep.peers[addr] = p
		if ep.closed {
			p.close(ErrClosed)
		}
	}
	t := target{int32(vertex), int32(subtask), int32(ch)}
	s := &sender{p: p, t: t, credit: ep.capacity, wake: make(chan struct{}, 1)}
	p.mu.Lock()
	p.senders[t] = s
	p.mu.Unlock()
	return s
}

// Credit returns one unit of credit for gate channel ch of local subtask
// (vertex, subtask) to its remote sender. Call it from the gate's OnTake;
// it does nothing for channels fed from this process.
func (ep *Endpoint) Credit(vertex, subtask, ch int) {
	t := target{int32(vertex), int32(subtask), int32(ch)}
	ep.mu.Lock()
	in := ep.feeds[t]
	ep.mu.Unlock()
	if in != nil {
		in.credit(t)
	}
}

// incoming is a connection from a sending peer.
type incoming struct {
	conn  net.Conn
	wmu   sync.Mutex
	buf   []byte
	ended map[target]bool // channels that delivered End
}

func (in *incoming) credit(t target) {
	in.wmu.Lock()
	in.buf = appendCredit(in.buf[:0], t, 1)
	in.conn.Write(in.buf) // a failed write means the sender is gone; its receiver fails the attempt
	in.wmu.Unlock()
}

// receive delivers the elements of an incoming connection until it closes.
func (ep *Endpoint) receive(c net.Conn, fr *frameReader) {
	in := &incoming{conn: c, ended: map[target]bool{}}
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
	closed := ep.closed
	open := 0
	for t := range ep.feeds {
		if ep.feeds[t] == in && !in.ended[t] {
			open++
		}
	}
	ep.mu.Unlock()
	if closed || open == 0 {
		return // the attempt ended, or the sender finished every channel
	}
	ep.fail(fmt.Errorf("data plane: connection from %s broke with %d channels unfinished: %w", c.RemoteAddr(), open, err))
}

func (ep *Endpoint) deliver(in *incoming, fr *frameReader) error {
	for {
		typ, n, err := fr.next()
		if err != nil {
			return err
		}
		if typ != frameElement {
			return fmt.Errorf("%w: type %d from a sender", errBadFrame, typ)
		}
		t, e, prio, err := fr.element(n)
		if err != nil {
			return err
		}
		g := ep.gate(int(t.vertex), int(t.subtask))
		if g == nil || t.ch < 0 || int(t.ch) >= g.Channels() {
			return fmt.Errorf("%w: no local channel %d of subtask %d of task %d", errBadFrame, t.ch, t.subtask, t.vertex)
		}
		ep.mu.Lock()
		if ep.feeds[t] != in {
			ep.feeds[t] = in
		}
		if e.Kind == exchange.End {
			in.ended[t] = true
		}
		ep.mu.Unlock()
		if prio {
			g.SendPriority(int(t.ch), e)
		} else {
			g.Deliver(int(t.ch), e)
		}
	}
}

// peer is the connection to one receiving node, shared by all channels
// of the endpoint that lead there. It dials on the first send.
type peer struct {
	ep   *Endpoint
	addr string

	dialOnce sync.Once
	ready    chan struct{} // closed once dialled (or failed)
	conn     net.Conn

	mu      sync.Mutex
	senders map[target]*sender
	err     error // sticky: the connection is unusable

	wmu sync.Mutex
	hdr []byte
}

func (p *peer) connect() error {
	p.dialOnce.Do(func() {
		defer close(p.ready)
		c, err := p.ep.node.dial(p.ep.ctx, p.addr)
		if err == nil {
			_, err = c.Write(appendHello(nil, p.ep.key))
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
		go p.readCredits(c)
	})
	<-p.ready
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// readCredits applies the credit the receiver returns until the
// connection closes.
func (p *peer) readCredits(c net.Conn) {
	defer p.ep.wg.Done()
	fr := newFrameReader(c)
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
			if p.err == nil {
				err = fmt.Errorf("data plane: connection to %s broke: %w", p.addr, err)
				p.close(err)
				p.ep.fail(err)
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

// write sends one element frame. The peer owns e.Buf afterwards.
func (p *peer) write(t target, e exchange.Element, prio bool) error {
	if err := p.connect(); err != nil {
		return err
	}
	var payload []byte
	if e.Buf != nil {
		payload = e.Buf.B
	}
	p.wmu.Lock()
	p.hdr = appendElementHeader(p.hdr[:0], t, e, prio, len(payload))
	bufs := net.Buffers{p.hdr, payload}
	_, err := bufs.WriteTo(p.conn)
	p.wmu.Unlock()
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
	p      *peer
	t      target
	credit int  // guarded by p.mu
	ended  bool // End was sent; guarded by p.mu
	wake   chan struct{}
}

// SendTimed waits for credit, then sends e.
func (s *sender) SendTimed(ctx context.Context, e exchange.Element) (time.Duration, error) {
	p := s.p
	var start time.Time
	waited := func() time.Duration {
		if start.IsZero() {
			return 0
		}
		return time.Since(start)
	}
	for {
		p.mu.Lock()
		if err := p.err; err != nil {
			p.mu.Unlock()
			return waited(), err
		}
		if s.credit > 0 {
			s.credit--
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
	return waited(), p.write(s.t, e, false)
}

// SendPriority sends barrier e ahead of the receiver's queue, without
// credit. An error makes the peer unusable; the next SendTimed reports it.
func (s *sender) SendPriority(e exchange.Element) {
	s.p.write(s.t, e, true)
}
