package transport

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// The handshake. Every connection is authenticated before the receiver
// reads any element from it, by a challenge and response keyed with the
// cluster's secret (Config.Secret, the --token):
//
//	receiver -> sender   challenge | nonce R (32 random bytes)
//	sender -> receiver   hello     | nonce S (32 random bytes) | mac S | endpoint key
//	receiver -> sender   accept    | mac R
//
// mac S is HMAC-SHA256(secret, "weir data plane sender" | R | S | key) and
// mac R the same with "receiver"; each side compares in constant time. The
// secret never crosses the network, and a recorded handshake is worthless
// on a new connection, whose challenge differs. The receiver drops a
// connection that fails (wrong or missing secret, garbage, a peer too
// slow) and logs why; the attempt the endpoint key names is not touched.
// The sender learns from mac R that the receiver knows the secret too.
//
// The handshake authenticates the peers, not the bytes that follow: on a
// network where someone can take over TCP connections, use mutual TLS,
// under which the handshake runs as well.

const (
	nonceLen = 32
	macLen   = sha256.Size
)

// ErrUnauthenticated means a peer failed the handshake: it does not know
// the cluster's secret, or is no weir data plane.
var ErrUnauthenticated = errors.New("transport: the peer failed the data plane handshake")

func handshakeMAC(secret []byte, role string, r, s []byte, key string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("weir data plane " + role + "\x00"))
	m.Write(r)
	m.Write(s)
	m.Write([]byte(key))
	return m.Sum(nil)
}

func nonce() []byte {
	b := make([]byte, nonceLen)
	rand.Read(b) // never fails (crypto/rand)
	return b
}

func appendFrame(b []byte, typ byte, parts ...[]byte) []byte {
	n := 1
	for _, p := range parts {
		n += len(p)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	b = append(b, typ)
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// readFixed reads a frame of type typ whose body is exactly n bytes.
func (f *frameReader) readFixed(typ byte, n int) ([]byte, error) {
	t, size, err := f.next()
	if err != nil {
		return nil, err
	}
	if t != typ || size != n {
		return nil, fmt.Errorf("%w: frame of type %d and %d bytes, want type %d and %d bytes", errBadFrame, t, size, typ, n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(f.r, b); err != nil {
		return nil, err
	}
	return b, nil
}

// accept runs the receiver's side of the handshake on c within timeout,
// and returns the endpoint key the sender asks for.
func accept(c net.Conn, fr *frameReader, secret []byte, timeout time.Duration) (string, error) {
	c.SetDeadline(time.Now().Add(timeout))
	defer c.SetDeadline(time.Time{})
	r := nonce()
	if _, err := c.Write(appendFrame(nil, frameChallenge, r)); err != nil {
		return "", err
	}
	typ, size, err := fr.next()
	if err != nil {
		return "", err
	}
	if typ != frameHello || size < nonceLen+macLen+1 || size > nonceLen+macLen+1024 {
		return "", fmt.Errorf("%w: a frame of type %d and %d bytes where the hello belongs", errBadFrame, typ, size)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(fr.r, body); err != nil {
		return "", err
	}
	s, mac, key := body[:nonceLen], body[nonceLen:nonceLen+macLen], string(body[nonceLen+macLen:])
	if !hmac.Equal(mac, handshakeMAC(secret, "sender", r, s, key)) {
		return "", fmt.Errorf("%w: it does not know the cluster's token", ErrUnauthenticated)
	}
	if _, err := c.Write(appendFrame(nil, frameAccept, handshakeMAC(secret, "receiver", r, s, key))); err != nil {
		return "", err
	}
	return key, nil
}

// greet runs the sender's side of the handshake on c within timeout, for
// the endpoint key.
func greet(c net.Conn, fr *frameReader, secret []byte, key string, timeout time.Duration) error {
	c.SetDeadline(time.Now().Add(timeout))
	defer c.SetDeadline(time.Time{})
	r, err := fr.readFixed(frameChallenge, nonceLen)
	if err != nil {
		return fmt.Errorf("reading the challenge: %w", err)
	}
	s := nonce()
	if _, err := c.Write(appendFrame(nil, frameHello, s, handshakeMAC(secret, "sender", r, s, key), []byte(key))); err != nil {
		return err
	}
	mac, err := fr.readFixed(frameAccept, macLen)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: the receiver closed the connection (has every process the same --token?)", ErrUnauthenticated)
	}
	if err != nil {
		return fmt.Errorf("reading the receiver's answer: %w", err)
	}
	if !hmac.Equal(mac, handshakeMAC(secret, "receiver", r, s, key)) {
		return fmt.Errorf("%w: the receiver does not know the cluster's token", ErrUnauthenticated)
	}
	return nil
}
