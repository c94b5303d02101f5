package codec_test

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/weir-stream/weir/codec"
)

// roundTrip encodes v with c after a prefix, decodes it back and checks
// that Decode consumed exactly the encoding and that the result equals v
// under eq. It returns the encoding.
func roundTrip[T any](t *testing.T, c codec.Codec[T], v T, eq func(a, b T) bool) []byte {
	t.Helper()
	prefix := []byte("prefix")
	buf := c.Append(append([]byte(nil), prefix...), v)
	if !bytes.Equal(buf[:len(prefix)], prefix) {
		t.Fatalf("Append(%v) overwrote dst: got %q", v, buf[:len(prefix)])
	}
	enc := buf[len(prefix):]
	// Trailing bytes must be left alone.
	src := append(append([]byte(nil), enc...), 0xff, 0xfe)
	var got T
	n, err := c.Decode(src, &got)
	if err != nil {
		t.Fatalf("Decode(Append(%v)) = %v", v, err)
	}
	if n != len(enc) {
		t.Fatalf("Decode(Append(%v)) consumed %d bytes, want %d", v, n, len(enc))
	}
	if !eq(got, v) {
		t.Fatalf("Decode(Append(%v)) = %v", v, got)
	}
	// Every proper prefix of an encoding is corrupt.
	for i := range len(enc) {
		var x T
		if _, err := c.Decode(enc[:i], &x); !errors.Is(err, codec.ErrCorrupt) {
			t.Fatalf("Decode(Append(%v)[:%d]) error = %v, want ErrCorrupt", v, i, err)
		}
	}
	return enc
}

func equal[T comparable](a, b T) bool { return a == b }

func TestInt64(t *testing.T) {
	c := codec.Int64()
	for _, v := range []int64{0, 1, -1, 63, -64, 64, -65, 1 << 40, math.MaxInt64, math.MinInt64} {
		roundTrip(t, c, v, equal)
	}
}

func TestInt32(t *testing.T) {
	c := codec.Int32()
	for _, v := range []int32{0, 1, -1, 1000, -1000, math.MaxInt32, math.MinInt32} {
		roundTrip(t, c, v, equal)
	}
}

func TestInt(t *testing.T) {
	c := codec.Int()
	for _, v := range []int{0, 1, -1, 1 << 20, math.MaxInt, math.MinInt} {
		roundTrip(t, c, v, equal)
	}
}

func TestUint64(t *testing.T) {
	c := codec.Uint64()
	for _, v := range []uint64{0, 1, 127, 128, 255, 1 << 35, math.MaxUint64} {
		roundTrip(t, c, v, equal)
	}
}

func TestUint32(t *testing.T) {
	c := codec.Uint32()
	for _, v := range []uint32{0, 1, 127, 128, math.MaxUint32} {
		roundTrip(t, c, v, equal)
	}
}

func TestFloat64(t *testing.T) {
	c := codec.Float64()
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	for _, v := range []float64{0, math.Copysign(0, -1), 1.5, -2.25, math.MaxFloat64, math.SmallestNonzeroFloat64,
		math.Inf(1), math.Inf(-1), math.NaN(), math.Float64frombits(0x7ff0000000000123)} {
		roundTrip(t, c, v, same)
	}
}

func TestFloat32(t *testing.T) {
	c := codec.Float32()
	same := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }
	for _, v := range []float32{0, float32(math.Copysign(0, -1)), 1.5, math.MaxFloat32, float32(math.Inf(-1)), float32(math.NaN())} {
		roundTrip(t, c, v, same)
	}
}

func TestBool(t *testing.T) {
	for _, v := range []bool{false, true} {
		roundTrip(t, codec.Bool(), v, equal)
	}
}

func TestString(t *testing.T) {
	for _, v := range []string{"", "a", "héllo, 世界", "\xff\xfe not utf-8", string(make([]byte, 300))} {
		roundTrip(t, codec.String(), v, equal)
	}
}

func TestBytes(t *testing.T) {
	c := codec.Bytes()
	for _, v := range [][]byte{nil, {0}, []byte("payload"), make([]byte, 200)} {
		roundTrip(t, c, v, bytes.Equal)
	}
	// Empty slices decode as nil, and decoded slices do not alias src.
	enc := c.Append(nil, []byte{})
	got := []byte("old")
	if _, err := c.Decode(enc, &got); err != nil || got != nil {
		t.Fatalf("Decode(empty) = %q, %v; want nil, nil", got, err)
	}
	enc = c.Append(nil, []byte("abc"))
	if _, err := c.Decode(enc, &got); err != nil {
		t.Fatal(err)
	}
	enc[1] = 'X'
	if string(got) != "abc" {
		t.Fatalf("decoded bytes alias the input: got %q after changing input", got)
	}
}

func TestTime(t *testing.T) {
	c := codec.Time()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		ny = time.FixedZone("EST", -5*3600)
	}
	tests := []time.Time{
		{},
		time.Unix(0, 0),
		time.Unix(1_700_000_000, 123_456_789),
		time.Unix(-1, 999_999_999),
		time.Date(2024, 2, 29, 12, 30, 0, 5, ny),
		time.Now(), // carries a monotonic reading
		time.Unix(0, math.MaxInt64),
		time.Unix(0, math.MinInt64), // the escape value itself
		time.Unix(0, math.MinInt64+1),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(1500, 6, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Unix(math.MaxInt64/1_000_000_000, 854_775_808), // one past the int64 range
	}
	for _, v := range tests {
		roundTrip(t, c, v, time.Time.Equal)
		var got time.Time
		if _, err := c.Decode(c.Append(nil, v), &got); err != nil {
			t.Fatal(err)
		}
		if got.Location() != time.UTC {
			t.Errorf("Decode(%v) location = %v, want UTC", v, got.Location())
		}
	}
	var got time.Time = time.Now()
	if _, err := c.Decode(c.Append(nil, time.Time{}), &got); err != nil || got != (time.Time{}) || !got.IsZero() {
		t.Errorf("zero Time decoded as %v, %v; want the zero Time", got, err)
	}
}

func TestDuration(t *testing.T) {
	for _, v := range []time.Duration{0, time.Nanosecond, -time.Hour, math.MaxInt64, math.MinInt64} {
		roundTrip(t, codec.Duration(), v, equal)
	}
}

// TestGolden pins the wire format: changing it breaks stored state.
func TestGolden(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want []byte
	}{
		{"int64 0", codec.Int64().Append(nil, 0), []byte{0}},
		{"int64 -1", codec.Int64().Append(nil, -1), []byte{1}},
		{"int64 1", codec.Int64().Append(nil, 1), []byte{2}},
		{"int64 -65", codec.Int64().Append(nil, -65), []byte{0x81, 0x01}},
		{"uint64 300", codec.Uint64().Append(nil, 300), []byte{0xac, 0x02}},
		{"uint32 max", codec.Uint32().Append(nil, math.MaxUint32), []byte{0xff, 0xff, 0xff, 0xff, 0x0f}},
		{"float64 1", codec.Float64().Append(nil, 1), []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}},
		{"float32 1", codec.Float32().Append(nil, 1), []byte{0, 0, 0x80, 0x3f}},
		{"bool", codec.Bool().Append(nil, true), []byte{1}},
		{"string", codec.String().Append(nil, "hi"), []byte{2, 'h', 'i'}},
		{"bytes", codec.Bytes().Append(nil, []byte{7}), []byte{1, 7}},
		{"time epoch+1ns", codec.Time().Append(nil, time.Unix(0, 1)), []byte{2}},
		{"time zero", codec.Time().Append(nil, time.Time{}),
			// escape (MinInt64), seconds -62135596800, nanoseconds 0
			[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0xff, 0xdb, 0x8f, 0xf9, 0xce, 0x03, 0x00}},
		{"duration", codec.Duration().Append(nil, time.Microsecond), []byte{0xd0, 0x0f}},
	}
	for _, tt := range tests {
		if !bytes.Equal(tt.got, tt.want) {
			t.Errorf("%s: got % x, want % x", tt.name, tt.got, tt.want)
		}
	}
}

// TestBuiltinCorrupt checks inputs that are malformed rather than short.
func TestBuiltinCorrupt(t *testing.T) {
	var (
		i64 int64
		i32 int32
		u32 uint32
		u64 uint64
		b   bool
		s   string
		ts  time.Time
	)
	tests := []struct {
		name    string
		decode  func() (int, error)
		wantMsg string
	}{
		{"empty", func() (int, error) { return codec.Int64().Decode(nil, &i64) },
			"codec: decoding int64: truncated input"},
		{"over-long varint", func() (int, error) { return codec.Int64().Decode([]byte{0x80, 0x00}, &i64) },
			"codec: decoding int64: over-long varint"},
		{"varint overflow", func() (int, error) {
			return codec.Uint64().Decode([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, &u64)
		}, "codec: decoding uint64: varint overflows 64 bits"},
		{"eleven-byte varint", func() (int, error) {
			return codec.Uint64().Decode(bytes.Repeat([]byte{0x80}, 11), &u64)
		}, "codec: decoding uint64: varint overflows 64 bits"},
		{"int32 range", func() (int, error) { return codec.Int32().Decode(codec.Int64().Append(nil, 1<<31), &i32) },
			"codec: decoding int32: value out of range"},
		{"uint32 range", func() (int, error) { return codec.Uint32().Decode(codec.Uint64().Append(nil, 1<<32), &u32) },
			"codec: decoding uint32: value out of range"},
		{"bool 2", func() (int, error) { return codec.Bool().Decode([]byte{2}, &b) },
			"codec: decoding bool: byte is neither 0 nor 1"},
		{"string length", func() (int, error) { return codec.String().Decode([]byte{5, 'a'}, &s) },
			"codec: decoding string: length exceeds input"},
		{"huge string length", func() (int, error) {
			return codec.String().Decode([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, &s)
		}, "codec: decoding string: length exceeds input"},
		{"float64 short", func() (int, error) { return codec.Float64().Decode([]byte{1, 2, 3}, new(float64)) },
			"codec: decoding float64: truncated input"},
		{"time nanoseconds", func() (int, error) {
			src := codec.Int64().Append(nil, math.MinInt64)
			src = codec.Int64().Append(src, 0)
			src = codec.Uint64().Append(src, 1e9)
			return codec.Time().Decode(src, &ts)
		}, "codec: decoding time.Time: nanoseconds out of range"},
		{"time needless escape", func() (int, error) {
			src := codec.Int64().Append(nil, math.MinInt64)
			src = codec.Int64().Append(src, 5)
			src = codec.Uint64().Append(src, 0)
			return codec.Time().Decode(src, &ts)
		}, "codec: decoding time.Time: escaped time fits in nanoseconds"},
	}
	for _, tt := range tests {
		n, err := tt.decode()
		if !errors.Is(err, codec.ErrCorrupt) || n != 0 {
			t.Errorf("%s: got %d, %v; want 0, error wrapping ErrCorrupt", tt.name, n, err)
			continue
		}
		if err.Error() != tt.wantMsg {
			t.Errorf("%s: error %q, want %q", tt.name, err, tt.wantMsg)
		}
	}
}
