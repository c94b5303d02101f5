package transport

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/weir-stream/weir/internal/exchange"
)

// batch returns a data element holding b as n records.
func batch(b []byte, n int) exchange.Element {
	buf := exchange.GetBuffer()
	buf.B = append(buf.B, b...)
	buf.N = n
	return exchange.Element{Kind: exchange.Data, Buf: buf}
}

// records returns size bytes that compress well: varint-like numbers
// and repeated strings, as encoded records are.
func records(size int) []byte {
	var b []byte
	for i := 0; len(b) < size; i++ {
		b = binary.AppendUvarint(b, uint64(1000+i%37))
		b = append(b, "channel-"...)
		b = append(b, byte('a'+i%5))
	}
	return b[:size]
}

// A node that compresses sends batches that arrive as they were sent,
// at a receiver that compresses nothing itself; a batch under the
// threshold or one that does not shrink goes uncompressed.
func TestCompressedBatchesArriveIntact(t *testing.T) {
	random := make([]byte, 8<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	sent := [][]byte{records(exchange.BufferSize), records(100), random, records(3000)}
	for _, c := range []Compression{CompressLZ4, CompressZstd} {
		t.Run(c.String(), func(t *testing.T) {
			s := pairWith(t, 8, 1, Config{Compression: c}, Config{})
			snd := s.snd.Sender(s.b.Addr(), 1, 0, 0)
			for i, b := range sent {
				if _, err := snd.SendTimed(context.Background(), batch(b, i+1)); err != nil {
					t.Fatal(err)
				}
				if _, err := snd.SendTimed(context.Background(), exchange.Element{Kind: exchange.Watermark, Time: int64(i)}); err != nil {
					t.Fatal(err)
				}
			}
			for i, want := range sent {
				_, e := poll(t, s.g)
				if e.Kind != exchange.Data || e.Buf.N != i+1 || !bytes.Equal(e.Buf.B, want) {
					t.Fatalf("batch %d: got %s element of %d records and %d bytes, want the %d bytes sent", i, e.Kind, e.Buf.N, len(e.Buf.B), len(want))
				}
				exchange.PutBuffer(e.Buf)
				if _, e = poll(t, s.g); e.Kind != exchange.Watermark || e.Time != int64(i) {
					t.Fatalf("after batch %d: got %+v, want watermark %d", i, e, i)
				}
			}
			st := s.a.Stats()
			raw := int64(0)
			for _, b := range sent {
				raw += int64(len(b))
			}
			if st.Batches != 4 || st.Compressed != 2 || st.RecordBytes != raw || st.Bytes >= raw {
				t.Fatalf("sender's stats %+v: want 4 batches of %d bytes, the 2 compressible ones compressed, fewer bytes sent", st, raw)
			}
		})
	}
}

// A compressed batch that does not decode to what its frame announced
// fails the receiving attempt with an error that names the connection;
// nothing of it is delivered.
func TestCorruptCompressedBatchFailsTheAttemptNamingTheConnection(t *testing.T) {
	var z lz4.Compressor
	block := make([]byte, lz4.CompressBlockBound(2000))
	n, err := z.CompressBlock(records(2000), block)
	if err != nil || n == 0 {
		t.Fatalf("lz4: %d bytes, %v", n, err)
	}
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	frame := enc.EncodeAll(records(2000), nil)
	enc.Close()
	for _, tc := range []struct {
		name    string
		codec   Compression
		raw     int
		payload []byte
	}{
		{"lz4 shorter than announced", CompressLZ4, 4000, block[:n]},
		{"lz4 truncated", CompressLZ4, 2000, block[:n/2]},
		{"zstd garbage", CompressZstd, 2000, []byte("not a zstd frame at all, just bytes")},
		{"zstd flipped", CompressZstd, 2000, flip(frame, len(frame)/2)},
		{"zstd longer than announced", CompressZstd, 1000, frame},
		{"unknown codec", Compression(9), 2000, block[:n]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := pair(t, 8, 1)
			c := handshaken(t, s.b.Addr(), "job/1")
			to := target{1, 0, 0}
			b := appendElementHeader(nil, frameElement, to, exchange.Element{Kind: exchange.Watermark, Time: 3}, 0, 0)
			payload := binary.BigEndian.AppendUint32([]byte{byte(tc.codec)}, uint32(tc.raw))
			payload = append(payload, tc.payload...)
			b = appendElementHeader(b, frameCompressed, to, batch(nil, 7), 0, len(payload))
			b = append(b, payload...)
			if _, err := c.Write(b); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-s.failed:
				if !errors.Is(err, errCorrupt) || !strings.Contains(err.Error(), c.LocalAddr().String()) {
					t.Fatalf("failed with %v, want a corrupt batch from %s", err, c.LocalAddr())
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the corrupt batch did not fail the attempt")
			}
			if q := s.g.Snapshot(0); len(q) != 1 || q[0].Kind != exchange.Watermark {
				t.Fatalf("the gate holds %+v, want the watermark alone", q)
			}
		})
	}
}

func flip(b []byte, i int) []byte {
	b = bytes.Clone(b)
	b[i] ^= 0xff
	return b
}

// handshaken dials addr and completes the sender's handshake for key.
func handshaken(t *testing.T, addr, key string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := greet(c, newFrameReader(c, nil), nil, key, 10*time.Second); err != nil {
		t.Fatal(fmt.Errorf("handshake: %w", err))
	}
	return c
}

func TestParseCompression(t *testing.T) {
	for _, c := range []Compression{CompressNone, CompressLZ4, CompressZstd} {
		if got, err := ParseCompression(c.String()); err != nil || got != c {
			t.Fatalf("ParseCompression(%q) = %v, %v", c, got, err)
		}
	}
	if _, err := ParseCompression("gzip"); err == nil {
		t.Fatal("ParseCompression accepted gzip")
	}
}
