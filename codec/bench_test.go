package codec_test

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"testing"

	"github.com/weir-stream/weir/codec"
)

// benchRecord is a typical small stream record.
type benchRecord struct {
	Key   string
	Ts    int64
	Value float64
	Count int64
}

var benchIn = benchRecord{Key: "sensor-42", Ts: 1_700_000_000_123_456_789, Value: 21.5, Count: 1234}

// BenchmarkFor measures one Append plus one Decode with For's codec.
func BenchmarkFor(b *testing.B) {
	c := codec.MustFor[benchRecord]()
	buf := c.Append(nil, benchIn)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	var out benchRecord
	for b.Loop() {
		buf = c.Append(buf[:0], benchIn)
		if _, err := c.Decode(buf, &out); err != nil {
			b.Fatal(err)
		}
	}
	if out != benchIn {
		b.Fatalf("got %+v, want %+v", out, benchIn)
	}
}

// BenchmarkForEncode and BenchmarkForDecode split BenchmarkFor.
func BenchmarkForEncode(b *testing.B) {
	c := codec.MustFor[benchRecord]()
	buf := c.Append(nil, benchIn)
	b.ReportAllocs()
	for b.Loop() {
		buf = c.Append(buf[:0], benchIn)
	}
}

func BenchmarkForDecode(b *testing.B) {
	c := codec.MustFor[benchRecord]()
	buf := c.Append(nil, benchIn)
	b.ReportAllocs()
	var out benchRecord
	for b.Loop() {
		if _, err := c.Decode(buf, &out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGob encodes and decodes through one long-lived gob stream, the
// way gob is meant to be used (type information is sent once).
func BenchmarkGob(b *testing.B) {
	var buf bytes.Buffer
	enc := gob.NewEncoder(&buf)
	dec := gob.NewDecoder(&buf)
	b.ReportAllocs()
	var out benchRecord
	for b.Loop() {
		if err := enc.Encode(&benchIn); err != nil {
			b.Fatal(err)
		}
		if err := dec.Decode(&out); err != nil {
			b.Fatal(err)
		}
	}
	if out != benchIn {
		b.Fatalf("got %+v, want %+v", out, benchIn)
	}
}

func BenchmarkJSONStdlib(b *testing.B) {
	b.ReportAllocs()
	var out benchRecord
	for b.Loop() {
		data, err := json.Marshal(&benchIn)
		if err != nil {
			b.Fatal(err)
		}
		if err := json.Unmarshal(data, &out); err != nil {
			b.Fatal(err)
		}
	}
	if out != benchIn {
		b.Fatalf("got %+v, want %+v", out, benchIn)
	}
}

// BenchmarkJSONCodec measures this package's JSON codec.
func BenchmarkJSONCodec(b *testing.B) {
	c := codec.JSON[benchRecord]()
	buf := c.Append(nil, benchIn)
	b.ReportAllocs()
	var out benchRecord
	for b.Loop() {
		buf = c.Append(buf[:0], benchIn)
		if _, err := c.Decode(buf, &out); err != nil {
			b.Fatal(err)
		}
	}
	if out != benchIn {
		b.Fatalf("got %+v, want %+v", out, benchIn)
	}
}
