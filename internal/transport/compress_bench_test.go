package transport

import (
	"encoding/binary"
	"testing"

	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/nexmark"
)

// nexmarkBatch returns a batch of the records Nexmark q5 (bids keyed by
// auction: the auction id) or q8 (new persons and auctions keyed by
// person: id, name, and which of the two) send between tasks, encoded
// as the task writer does: a varint timestamp delta, then the value.
func nexmarkBatch(b *testing.B, query string) []byte {
	cfg := nexmark.DefaultConfig()
	cfg.NumEvents = 1 << 20
	g, err := nexmark.NewGenerator(cfg)
	if err != nil {
		b.Fatal(err)
	}
	var out []byte
	var prev int64
	var e nexmark.Event
	for i := int64(0); len(out) < exchange.BufferSize; i++ {
		g.EventAt(i, &e)
		ts := e.DateTime()
		switch {
		case query == "q5" && e.Kind == nexmark.BidEvent:
			out = binary.AppendVarint(out, ts-prev)
			out = binary.AppendVarint(out, e.Bid.Auction)
		case query == "q8" && e.Kind == nexmark.PersonEvent:
			out = binary.AppendVarint(out, ts-prev)
			out = binary.AppendVarint(out, e.Person.ID)
			out = binary.AppendUvarint(out, uint64(len(e.Person.Name)))
			out = append(out, e.Person.Name...)
			out = append(out, 0)
		case query == "q8" && e.Kind == nexmark.AuctionEvent:
			out = binary.AppendVarint(out, ts-prev)
			out = binary.AppendVarint(out, e.Auction.Seller)
			out = binary.AppendUvarint(out, 0)
			out = append(out, 1)
		default:
			continue
		}
		prev = ts
	}
	return out
}

// BenchmarkCompression compresses and decompresses one batch of each
// query's records with each codec: MB/s of records, and the compressed
// size as a share of the batch (ratio).
func BenchmarkCompression(b *testing.B) {
	for _, q := range []string{"q5", "q8"} {
		raw := nexmarkBatch(b, q)
		for _, c := range []Compression{CompressLZ4, CompressZstd} {
			cs, err := newCodecs(c)
			if err != nil {
				b.Fatal(err)
			}
			p := cs.compress(raw)
			size := len(*p)
			cs.release(p)
			b.Run(q+"/"+c.String()+"/compress", func(b *testing.B) {
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					cs.release(cs.compress(raw))
				}
				b.ReportMetric(float64(size)/float64(len(raw)), "ratio")
			})
			b.Run(q+"/"+c.String()+"/decompress", func(b *testing.B) {
				p := cs.compress(raw)
				dst := make([]byte, len(raw))
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					if err := cs.decompress(c, (*p)[compressedHeader:], dst); err != nil {
						b.Fatal(err)
					}
				}
			})
			cs.close()
		}
	}
}
