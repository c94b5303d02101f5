package transport

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/weir-stream/weir/internal/exchange"
)

// Frames on a data connection. Every frame is a 4-byte big-endian length
// of what follows, then a type byte:
//
//	challenge 3 | nonce (the listener's first frame; auth.go)
//	hello     0 | nonce | mac | endpoint key (the dialer's first frame)
//	accept    4 | mac (the listener's answer to a valid hello)
//	element   1 | vertex i32 | subtask i32 | channel i32 | kind u8 | flags u8 |
//	              time i64 | checkpoint i64 | seq i64 | records i32 |
//	              encoded records
//	compressed 5 | the fields of an element | codec u8 | length u32 |
//	              the encoded records compressed by codec (a data
//	              element of a node with Config.Compression)
//	credit    2 | vertex i32 | subtask i32 | channel i32 | n i32
//
// After the handshake, elements flow from the dialer (sender) to the
// listener (receiver); credits flow back. A compressed batch has a frame
// type of its own, so that a receiver that does not know it refuses the
// connection rather than decode compressed bytes as records; length is
// that of the batch decompressed, which the receiver checks.
const (
	frameHello      = 0
	frameElement    = 1
	frameCredit     = 2
	frameChallenge  = 3
	frameAccept     = 4
	frameCompressed = 5
)

const (
	flagPriority  = 1 << 0
	flagUnaligned = 1 << 1
	flagReplay    = 1 << 2 // sent without credit (exchange.Sender.SendReplay)
	flagMustAlign = 1 << 3 // a barrier of a checkpoint that must be aligned
)

// target addresses one channel of one subtask's input gate.
type target struct {
	vertex, subtask, ch int32
}

const (
	elementHeader = 4 + 1 + 12 + 1 + 1 + 8 + 8 + 8 + 4
	creditFrame   = 4 + 1 + 12 + 4
	maxFrame      = 64 << 20 // far above any batch; guards against garbage
)

// appendElementHeader encodes the header of an element frame of type typ
// (frameElement or frameCompressed) whose records take payload bytes.
func appendElementHeader(b []byte, typ byte, t target, e exchange.Element, flags byte, payload int) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(elementHeader-4+payload))
	b = append(b, typ)
	b = appendTarget(b, t)
	if e.Unaligned {
		flags |= flagUnaligned
	}
	if e.MustAlign {
		flags |= flagMustAlign
	}
	b = append(b, byte(e.Kind), flags)
	b = binary.BigEndian.AppendUint64(b, uint64(e.Time))
	b = binary.BigEndian.AppendUint64(b, uint64(e.Checkpoint))
	b = binary.BigEndian.AppendUint64(b, uint64(e.Seq))
	n := 0
	if e.Buf != nil {
		n = e.Buf.N
	}
	return binary.BigEndian.AppendUint32(b, uint32(n))
}

func appendTarget(b []byte, t target) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(t.vertex))
	b = binary.BigEndian.AppendUint32(b, uint32(t.subtask))
	return binary.BigEndian.AppendUint32(b, uint32(t.ch))
}

func appendCredit(b []byte, t target, n int) []byte {
	b = binary.BigEndian.AppendUint32(b, creditFrame-4)
	b = append(b, frameCredit)
	b = appendTarget(b, t)
	return binary.BigEndian.AppendUint32(b, uint32(n))
}

func readTarget(h []byte) target {
	return target{int32(binary.BigEndian.Uint32(h)), int32(binary.BigEndian.Uint32(h[4:])), int32(binary.BigEndian.Uint32(h[8:]))}
}

var errBadFrame = errors.New("transport: malformed frame")

// frameReader reads frames from a connection.
type frameReader struct {
	r      *bufio.Reader
	hdr    [elementHeader]byte
	codecs *codecs // decompresses batches; nil on the sender's side
	zbuf   []byte  // the compressed payload of the latest frame
}

func newFrameReader(r io.Reader, c *codecs) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 64<<10), codecs: c}
}

// next reads the length and type of the next frame.
func (f *frameReader) next() (typ byte, n int, err error) {
	if _, err := io.ReadFull(f.r, f.hdr[:5]); err != nil {
		return 0, 0, err
	}
	n = int(binary.BigEndian.Uint32(f.hdr[:4]))
	if n < 1 || n > maxFrame {
		return 0, 0, fmt.Errorf("%w: length %d", errBadFrame, n)
	}
	return f.hdr[4], n - 1, nil
}

// element reads the body of an element frame of type typ (frameElement
// or frameCompressed) and n bytes, and its flags. Data elements get a
// buffer from the exchange pool, which the receiver owns; a compressed
// one that does not decode fails with errCorrupt.
func (f *frameReader) element(typ byte, n int) (target, exchange.Element, byte, error) {
	const body = elementHeader - 5
	if n < body {
		return target{}, exchange.Element{}, 0, fmt.Errorf("%w: element of %d bytes", errBadFrame, n)
	}
	h := f.hdr[:body]
	if _, err := io.ReadFull(f.r, h); err != nil {
		return target{}, exchange.Element{}, 0, err
	}
	t := readTarget(h)
	e := exchange.Element{Kind: exchange.Kind(h[12]), Time: int64(binary.BigEndian.Uint64(h[14:])),
		Checkpoint: int64(binary.BigEndian.Uint64(h[22:])), Seq: int64(binary.BigEndian.Uint64(h[30:])),
		Unaligned: h[13]&flagUnaligned != 0, MustAlign: h[13]&flagMustAlign != 0}
	flags := h[13]
	records := int(binary.BigEndian.Uint32(h[38:]))
	payload := n - body
	switch {
	case e.Kind == exchange.Data && typ == frameCompressed:
		b, err := f.inflate(payload)
		if err != nil {
			return t, e, flags, err
		}
		b.N = records
		e.Buf = b
	case e.Kind == exchange.Data:
		b := exchange.GetBuffer()
		if cap(b.B) < payload {
			b.B = make([]byte, payload)
		}
		b.B = b.B[:payload]
		if _, err := io.ReadFull(f.r, b.B); err != nil {
			return t, e, flags, err
		}
		b.N = records
		e.Buf = b
	case typ == frameCompressed:
		return t, e, flags, fmt.Errorf("%w: compressed %s element", errBadFrame, e.Kind)
	case payload != 0:
		return t, e, flags, fmt.Errorf("%w: %s element with %d payload bytes", errBadFrame, e.Kind, payload)
	}
	return t, e, flags, nil
}

// inflate reads a compressed payload of n bytes and decodes it into a
// buffer from the exchange pool.
func (f *frameReader) inflate(n int) (*exchange.Buffer, error) {
	if n < compressedHeader || f.codecs == nil {
		return nil, fmt.Errorf("%w: compressed payload of %d bytes", errBadFrame, n)
	}
	if cap(f.zbuf) < n {
		f.zbuf = make([]byte, n)
	}
	f.zbuf = f.zbuf[:n]
	if _, err := io.ReadFull(f.r, f.zbuf); err != nil {
		return nil, err
	}
	codec, raw := Compression(f.zbuf[0]), int(binary.BigEndian.Uint32(f.zbuf[1:]))
	if raw < 1 || raw > maxFrame {
		return nil, fmt.Errorf("%w: %s batch of %d bytes", errCorrupt, codec, raw)
	}
	b := exchange.GetBuffer()
	if cap(b.B) < raw {
		b.B = make([]byte, raw)
	}
	b.B = b.B[:raw]
	if err := f.codecs.decompress(codec, f.zbuf[compressedHeader:], b.B); err != nil {
		exchange.PutBuffer(b)
		return nil, err
	}
	if cap(f.zbuf) > 4*exchange.BufferSize {
		f.zbuf = nil // let an oversized buffer go
	}
	return b, nil
}

// credit reads the body of a credit frame of n bytes.
func (f *frameReader) credit(n int) (target, int, error) {
	if n != creditFrame-5 {
		return target{}, 0, fmt.Errorf("%w: credit of %d bytes", errBadFrame, n)
	}
	h := f.hdr[:n]
	if _, err := io.ReadFull(f.r, h); err != nil {
		return target{}, 0, err
	}
	return readTarget(h), int(binary.BigEndian.Uint32(h[12:])), nil
}
