package transport

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-stream/weir/internal/exchange"
)

// lines collects a node's log so that a test waits for a line.
type lines struct {
	mu    sync.Mutex
	all   []string
	added chan struct{}
}

func newLines() *lines { return &lines{added: make(chan struct{})} }

func (l *lines) add(s string) {
	l.mu.Lock()
	l.all = append(l.all, s)
	close(l.added)
	l.added = make(chan struct{})
	l.mu.Unlock()
}

// wait waits for the nth line (from 1) matching re.
func (l *lines) wait(t *testing.T, re string, nth int) {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.After(30 * time.Second)
	for {
		l.mu.Lock()
		n := 0
		for _, s := range l.all {
			if rx.MatchString(s) {
				n++
			}
		}
		added, all := l.added, strings.Join(l.all, "\n")
		l.mu.Unlock()
		if n >= nth {
			return
		}
		select {
		case <-added:
		case <-deadline:
			t.Fatalf("no %d lines matching %q:\n%s", nth, re, all)
		}
	}
}

// forged is what a peer without the token sends: the hello of the format
// before the handshake (the endpoint key alone), then a watermark far in
// the future on channel 0 of subtask 0 of vertex 1.
func forged(key string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(1+len(key)))
	b = append(b, frameHello)
	b = append(b, key...)
	return appendElementHeader(b, frameElement, target{1, 0, 0}, exchange.Element{Kind: exchange.Watermark, Time: 1 << 60}, 0, 0)
}

// expectClean checks that the gate's next element is a data element (the
// genuine one the test sent after the forged traffic) and that the
// endpoint did not fail.
func expectClean(t *testing.T, s *setup) {
	t.Helper()
	if _, e := poll(t, s.g); e.Kind != exchange.Data {
		t.Fatalf("the receiver got a %s element from a peer that failed the handshake", e.Kind)
	}
	select {
	case err := <-s.failed:
		t.Fatalf("the endpoint failed: %v", err)
	default:
	}
}

func sendData(t *testing.T, s *setup) {
	t.Helper()
	if _, err := s.snd.Sender(s.b.Addr(), 1, 0, 0).SendTimed(context.Background(), data(1)); err != nil {
		t.Fatal(err)
	}
}

func TestAPeerWithoutTheTokenIsRefusedBeforeAnyFrameIsRead(t *testing.T) {
	log := newLines()
	s := pairWith(t, 8, 1, Config{Secret: []byte("s3cret")}, Config{Secret: []byte("s3cret"), Log: log.add})
	c, err := net.Dial("tcp", s.b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(forged("job/1")); err != nil {
		t.Fatal(err)
	}
	log.wait(t, `^data plane: refused a connection from 127\.0\.0\.1:\d+: .*a frame of type 0 and 5 bytes where the hello belongs`, 1)
	if _, err := io.ReadAll(c); err != nil { // the challenge, then the end
		t.Fatalf("reading the refused connection: %v", err)
	}
	sendData(t, s)
	expectClean(t, s)
}

func TestGarbageOnTheDataPortFailsNothing(t *testing.T) {
	log := newLines()
	s := pairWith(t, 8, 1, Config{Secret: []byte("s3cret")}, Config{Secret: []byte("s3cret"), Log: log.add})
	for i, junk := range []string{"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "\x00\x00\x00\x05\x01\xff\xff\xff\xff", ""} {
		c, err := net.Dial("tcp", s.b.Addr())
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte(junk))
		c.(*net.TCPConn).CloseWrite()
		log.wait(t, `^data plane: refused a connection from`, i+1)
		c.Close()
	}
	sendData(t, s)
	expectClean(t, s)
}

func TestNodesWithDifferentTokensDoNotConnect(t *testing.T) {
	log := newLines()
	s := pairWith(t, 8, 1, Config{Secret: []byte("wrong")}, Config{Secret: []byte("s3cret"), Log: log.add})
	_, err := s.snd.Sender(s.b.Addr(), 1, 0, 0).SendTimed(context.Background(), data(1))
	if !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("sending with the wrong token: %v, want ErrUnauthenticated", err)
	}
	log.wait(t, `^data plane: refused a connection from .*: transport: the peer failed the data plane handshake: it does not know the cluster's token$`, 1)
	select {
	case err := <-s.failed:
		t.Fatalf("the receiving endpoint failed: %v", err)
	default:
	}
}

// A recorded handshake is worthless on a new connection: the challenge
// differs.
func TestARecordedHandshakeDoesNotAuthenticateAgain(t *testing.T) {
	log := newLines()
	s := pairWith(t, 8, 1, Config{Secret: []byte("s3cret")}, Config{Secret: []byte("s3cret"), Log: log.add})
	rec := newRecorder(t, s.b.Addr())
	defer rec.close()
	if _, err := s.snd.Sender(rec.addr(), 1, 0, 0).SendTimed(context.Background(), exchange.Element{Kind: exchange.Watermark, Time: 5}); err != nil {
		t.Fatal(err)
	}
	if _, e := poll(t, s.g); e.Kind != exchange.Watermark || e.Time != 5 {
		t.Fatalf("got %s at %d, want the watermark 5", e.Kind, e.Time)
	}
	sent := rec.sent()
	c, err := net.Dial("tcp", s.b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(append(sent, forged("job/1")[5+len("job/1"):]...)) // the recorded hello, then a forged watermark
	log.wait(t, `^data plane: refused a connection from .*it does not know the cluster's token$`, 1)
	s.snd.Sender(rec.addr(), 1, 0, 0).SendTimed(context.Background(), data(2))
	expectClean(t, s)
}

// recorder forwards one connection to addr and keeps what the dialer sent.
type recorder struct {
	ln  net.Listener
	mu  sync.Mutex
	buf []byte
	wg  sync.WaitGroup
	c   []net.Conn
}

func newRecorder(t *testing.T, addr string) *recorder {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{ln: ln}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		in, err := ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", addr)
		if err != nil {
			in.Close()
			return
		}
		r.mu.Lock()
		r.c = []net.Conn{in, out}
		r.mu.Unlock()
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			io.Copy(in, out)
			in.Close()
		}()
		b := make([]byte, 4096)
		for {
			n, err := in.Read(b)
			r.mu.Lock()
			r.buf = append(r.buf, b[:n]...)
			r.mu.Unlock()
			if err != nil || func() bool { _, err := out.Write(b[:n]); return err != nil }() {
				out.Close()
				return
			}
		}
	}()
	return r
}

func (r *recorder) addr() string { return r.ln.Addr().String() }

// sent returns the dialer's hello as recorded.
func (r *recorder) sent() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 4 + int(binary.BigEndian.Uint32(r.buf))
	return append([]byte(nil), r.buf[:n]...)
}

func (r *recorder) close() {
	r.ln.Close()
	r.mu.Lock()
	for _, c := range r.c {
		c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}
