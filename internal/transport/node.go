// Package transport carries stream elements between tasks in different
// processes: the data plane of cluster mode.
//
// Each process runs one Node, listening on one TCP address. A running
// attempt of a job registers an Endpoint under a key that every process of
// the attempt agrees on. The sending side of a remote channel dials the
// receiver's node once per (endpoint, peer address) and multiplexes all
// its channels over that connection.
//
// Flow control is by credit, per channel: a sender starts with as much
// credit as the receiver's queue holds (the runtime's queue capacity) and
// spends one per element; the receiver returns one each time its task
// takes an element from that channel. A sender without credit waits, so
// backpressure crosses processes, the receiver never blocks reading the
// connection (one slow channel cannot stall the others that share it),
// and memory stays bounded by the queue capacities. Priority barriers
// (unaligned checkpoints) travel without credit, as they do locally.
package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Config tunes a Node.
type Config struct {
	// ServerTLS, if set, makes the node accept only TLS connections (with
	// client certificates when it asks for them: mutual TLS).
	ServerTLS *tls.Config
	// ClientTLS, if set, is used to dial other nodes.
	ClientTLS *tls.Config
	// AcceptWait bounds how long an incoming connection waits for its
	// endpoint to be registered (peers deploy at about the same time).
	// Default 30s.
	AcceptWait time.Duration
	// DialTimeout bounds how long a sender keeps trying to reach a peer
	// and how long its handshake may take. Default 10s.
	DialTimeout time.Duration
	// Secret authenticates every connection (auth.go): the cluster's
	// token. All nodes of a cluster must have the same; empty is a valid
	// secret that every peer knows.
	Secret []byte
	// Compression compresses the record batches the node sends, each on
	// its own (batches under 1 KiB, and those that do not shrink, go as
	// they are). Receivers decode any compression whatever their own
	// setting. Default CompressNone.
	Compression Compression
	// Log receives a line for each refused connection.
	Log func(string)
}

// Stats counts what a node sent on its data connections since it
// started.
type Stats struct {
	// Batches counts the data elements sent, Compressed those of them
	// that went compressed.
	Batches, Compressed int64
	// RecordBytes is the size of the batches' encoded records before
	// compression.
	RecordBytes int64
	// Bytes is what the node wrote after the handshakes: every frame,
	// with its header, compressed or not, and the credits it returned.
	Bytes int64
}

// Node is one process's end of the data plane. Its methods are safe for
// concurrent use. Close stops every goroutine it started.
type Node struct {
	cfg    Config
	ln     net.Listener
	codecs *codecs

	batches, compressed, recordBytes, bytes atomic.Int64 // Stats

	mu        sync.Mutex
	endpoints map[string]*Endpoint
	changed   chan struct{} // closed and replaced when endpoints change
	conns     map[net.Conn]struct{}
	closed    bool
	wg        sync.WaitGroup
}

// Listen starts a node listening on addr ("host:port"; port 0 picks one).
func Listen(addr string, cfg Config) (*Node, error) {
	if cfg.AcceptWait <= 0 {
		cfg.AcceptWait = 30 * time.Second
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = func(string) {}
	}
	c, err := newCodecs(cfg.Compression)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		c.close()
		return nil, fmt.Errorf("data plane: listening on %s: %w", addr, err)
	}
	if cfg.ServerTLS != nil {
		ln = tls.NewListener(ln, cfg.ServerTLS)
	}
	n := &Node{cfg: cfg, ln: ln, codecs: c, endpoints: map[string]*Endpoint{}, changed: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	n.wg.Add(1)
	go n.accept()
	return n, nil
}

// Addr returns the address the node listens on.
func (n *Node) Addr() string { return n.ln.Addr().String() }

// Stats returns what the node sent so far.
func (n *Node) Stats() Stats {
	return Stats{Batches: n.batches.Load(), Compressed: n.compressed.Load(), RecordBytes: n.recordBytes.Load(), Bytes: n.bytes.Load()}
}

// Close stops listening, closes every connection and endpoint, and waits
// for the node's goroutines.
func (n *Node) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	err := n.ln.Close()
	for c := range n.conns {
		c.Close()
	}
	eps := make([]*Endpoint, 0, len(n.endpoints))
	for _, ep := range n.endpoints {
		eps = append(eps, ep)
	}
	close(n.changed)
	n.mu.Unlock()
	for _, ep := range eps {
		ep.Close()
	}
	n.wg.Wait()
	n.codecs.close()
	return err
}

func (n *Node) accept() {
	defer n.wg.Done()
	for {
		c, err := n.ln.Accept()
		if err != nil {
			return
		}
		if !n.track(c) {
			c.Close()
			return
		}
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			defer n.untrack(c)
			n.serve(c)
		}()
	}
}

// track records an open connection so that Close can close it; it
// reports false once the node is closed.
func (n *Node) track(c net.Conn) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return false
	}
	n.conns[c] = struct{}{}
	return true
}

func (n *Node) untrack(c net.Conn) {
	c.Close()
	n.mu.Lock()
	delete(n.conns, c)
	n.mu.Unlock()
}

// serve reads an incoming connection: once its handshake named the
// endpoint and proved that the peer knows the secret, elements follow
// until the peer closes it. A connection that fails the handshake is
// dropped and logged; no endpoint hears of it.
func (n *Node) serve(c net.Conn) {
	fr := newFrameReader(c, n.codecs)
	key, err := accept(c, fr, n.cfg.Secret, n.cfg.AcceptWait)
	if err != nil {
		n.cfg.Log(fmt.Sprintf("data plane: refused a connection from %s: %v", c.RemoteAddr(), err))
		return
	}
	ep := n.await(key)
	if ep == nil {
		return
	}
	ep.receive(c, fr)
}

// await returns the endpoint registered under key, waiting up to
// AcceptWait for it; nil if it does not appear or the node closes.
func (n *Node) await(key string) *Endpoint {
	deadline := time.NewTimer(n.cfg.AcceptWait)
	defer deadline.Stop()
	for {
		n.mu.Lock()
		ep, changed, closed := n.endpoints[key], n.changed, n.closed
		n.mu.Unlock()
		if ep != nil || closed {
			return ep
		}
		select {
		case <-changed:
		case <-deadline.C:
			return nil
		}
	}
}

func (n *Node) notifyLocked() {
	close(n.changed)
	n.changed = make(chan struct{})
}

// ErrClosed is returned by sends on a closed endpoint.
var ErrClosed = errors.New("transport: endpoint closed")

// dial connects to a peer node, retrying until DialTimeout or ctx ends.
func (n *Node) dial(ctx context.Context, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.DialTimeout)
	defer cancel()
	var d net.Dialer
	backoff := 20 * time.Millisecond
	for {
		var c net.Conn
		var err error
		if n.cfg.ClientTLS != nil {
			td := tls.Dialer{NetDialer: &d, Config: n.cfg.ClientTLS}
			c, err = td.DialContext(ctx, "tcp", addr)
		} else {
			c, err = d.DialContext(ctx, "tcp", addr)
		}
		if err == nil {
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetNoDelay(true)
			}
			return c, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("data plane: connecting to %s: %w", addr, err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}
