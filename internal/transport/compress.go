package transport

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/weir-stream/weir/internal/exchange"
)

// Compression is how a node compresses the record batches it sends
// (Config.Compression). A receiver decodes whatever each frame says, so
// the nodes of a cluster may differ; each chooses for what it sends.
type Compression uint8

const (
	// CompressNone sends batches as the codec encoded them.
	CompressNone Compression = iota
	// CompressLZ4 compresses each batch as one LZ4 block
	// (github.com/pierrec/lz4/v4): cheap to compress and to decode.
	CompressLZ4
	// CompressZstd compresses each batch as one zstd frame at its fastest
	// level (github.com/klauspost/compress/zstd): fewer bytes than LZ4
	// for more CPU.
	CompressZstd
)

// Compressions lists the names ParseCompression accepts, in order.
const Compressions = "none|lz4|zstd"

func (c Compression) String() string {
	switch c {
	case CompressNone:
		return "none"
	case CompressLZ4:
		return "lz4"
	case CompressZstd:
		return "zstd"
	}
	return fmt.Sprintf("compression(%d)", uint8(c))
}

// ParseCompression returns the Compression named s: none, lz4 or zstd.
func ParseCompression(s string) (Compression, error) {
	for c := CompressNone; c <= CompressZstd; c++ {
		if s == c.String() {
			return c, nil
		}
	}
	return 0, fmt.Errorf("unknown exchange compression %q (want %s)", s, Compressions)
}

// compressMin is the smallest batch a node compresses: below it the
// saving is a few bytes and the frame goes as it is.
const compressMin = 1 << 10

// compressedHeader is what a compressed payload starts with: the codec
// (a Compression) and the length of the batch it decodes to (u32).
const compressedHeader = 1 + 4

// errCorrupt means a compressed batch did not decode to the length its
// frame announced: the bytes are not what the sender compressed.
var errCorrupt = errors.New("transport: corrupt compressed batch")

// codecs compresses and decompresses batches for one node. Its methods
// are safe for concurrent use: the zstd encoder and decoder are, and the
// LZ4 compressors (which are not) come from a pool.
type codecs struct {
	send    Compression
	lz4     sync.Pool // *lz4.Compressor
	zenc    *zstd.Encoder
	scratch sync.Pool // *[]byte, compressed batches on their way out

	zdecOnce sync.Once // every node decodes zstd, made on the first frame
	zdec     *zstd.Decoder
	zdecErr  error
}

func newCodecs(send Compression) (*codecs, error) {
	c := &codecs{send: send}
	c.lz4.New = func() any { return new(lz4.Compressor) }
	c.scratch.New = func() any { return new([]byte) }
	if send == CompressZstd {
		var err error
		// A window of 128 KiB covers a batch (exchange.BufferSize and
		// what the last record takes beyond it) with memory to spare.
		if c.zenc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithLowerEncoderMem(true),
			zstd.WithWindowSize(1<<17)); err != nil {
			return nil, fmt.Errorf("transport: zstd encoder: %w", err)
		}
	}
	return c, nil
}

// decoder returns the node's zstd decoder, made on first use.
// DecodeAll with it writes at most cap(dst) bytes, the length the frame
// announced, so a forged frame cannot make it allocate more.
func (c *codecs) decoder() (*zstd.Decoder, error) {
	c.zdecOnce.Do(func() {
		c.zdec, c.zdecErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecodeAllCapLimit(true),
			zstd.WithDecoderMaxMemory(maxFrame))
	})
	return c.zdec, c.zdecErr
}

// close releases the zstd encoder's and decoder's goroutines. The node
// calls it once its connections are closed.
func (c *codecs) close() {
	if c.zenc != nil {
		c.zenc.Close()
	}
	c.zdecOnce.Do(func() {}) // none made after this
	if c.zdec != nil {
		c.zdec.Close()
	}
}

// compress returns the payload of a compressed element frame for batch b
// (compressedHeader, then the compressed bytes, in a buffer from the
// pool that the caller returns with release), or nil when the node sends
// batches uncompressed, b is below compressMin, or compressing b saves
// nothing.
func (c *codecs) compress(b []byte) *[]byte {
	if c.send == CompressNone || len(b) < compressMin {
		return nil
	}
	out := c.scratch.Get().(*[]byte)
	dst := binary.BigEndian.AppendUint32(append((*out)[:0], byte(c.send)), uint32(len(b)))
	switch c.send {
	case CompressLZ4:
		bound := compressedHeader + lz4.CompressBlockBound(len(b))
		if cap(dst) < bound {
			dst = append(make([]byte, 0, bound), dst...)
		}
		z := c.lz4.Get().(*lz4.Compressor)
		n, err := z.CompressBlock(b, dst[compressedHeader:bound])
		c.lz4.Put(z)
		if err != nil || n == 0 { // incompressible
			dst = dst[:0]
		} else {
			dst = dst[:compressedHeader+n]
		}
	case CompressZstd:
		dst = c.zenc.EncodeAll(b, dst)
	}
	*out = dst
	if len(dst) == 0 || len(dst) >= len(b) {
		c.release(out)
		return nil
	}
	return out
}

// release returns a payload from compress to the pool.
func (c *codecs) release(p *[]byte) {
	if cap(*p) > 4*exchange.BufferSize {
		return // let oversized buffers go
	}
	*p = (*p)[:0]
	c.scratch.Put(p)
}

// decompress decodes payload, compressed with codec, into dst, whose
// length is the one the frame announced. It fails with errCorrupt when
// the bytes do not decode to exactly len(dst) bytes.
func (c *codecs) decompress(codec Compression, payload, dst []byte) error {
	var n int
	var err error
	switch codec {
	case CompressLZ4:
		n, err = lz4.UncompressBlock(payload, dst)
	case CompressZstd:
		var d *zstd.Decoder
		if d, err = c.decoder(); err != nil {
			return fmt.Errorf("transport: zstd decoder: %w", err)
		}
		var out []byte
		out, err = d.DecodeAll(payload, dst[:0])
		n = len(out)
		if err == nil && n > 0 && &out[0] != &dst[0] {
			err = errors.New("decoded beyond the announced length")
		}
	default:
		return fmt.Errorf("%w: unknown compression %d", errCorrupt, codec)
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %v", errCorrupt, codec, err)
	}
	if n != len(dst) {
		return fmt.Errorf("%w: %s: %d bytes where the frame announced %d", errCorrupt, codec, n, len(dst))
	}
	return nil
}
