package codec

import (
	"testing"
	"time"
)

type plainEvent struct {
	ID    int64
	Name  string
	Price float64
	Tags  [2]string
	Inner struct{ OK bool }
	_     int32
}

type withSlice struct {
	ID   int64
	Tags []string
}

type withSkipped struct {
	ID    int64
	Cache string `codec:"-"`
}

type withTime struct{ At time.Time }

type withPointer struct{ Next *int64 }

type selfEncoded struct{ V int64 }

func (s selfEncoded) AppendBinary(dst []byte) ([]byte, error) { return Int64().Append(dst, s.V), nil }
func (s *selfEncoded) DecodeBinary(src []byte) (int, error)   { return Int64().Decode(src, &s.V) }

type holdsSelfEncoded struct{ S selfEncoded }

func transparentFor[T any](t *testing.T) bool {
	t.Helper()
	c, err := For[T]()
	if err != nil {
		t.Fatal(err)
	}
	return Transparent(c)
}

// Only types whose copy is what decoding their encoding gives pass as
// values: a slice, map or pointer would share the sender's memory, a
// time.Time loses its monotonic reading and location, a skipped field
// its value, and a self-encoding type may encode something else.
func TestTransparentHoldsOnlyForTypesWhoseCopyIsTheirDecoding(t *testing.T) {
	cases := []struct {
		name string
		got  bool
		want bool
	}{
		{"int64", transparentFor[int64](t), true},
		{"string", transparentFor[string](t), true},
		{"float32", transparentFor[float32](t), true},
		{"time.Duration", transparentFor[time.Duration](t), true},
		{"struct of scalars, strings, arrays and structs", transparentFor[plainEvent](t), true},
		{"[]byte", transparentFor[[]byte](t), false},
		{"time.Time", transparentFor[time.Time](t), false},
		{"struct with a slice", transparentFor[withSlice](t), false},
		{"struct with a skipped field", transparentFor[withSkipped](t), false},
		{"struct with a time.Time", transparentFor[withTime](t), false},
		{"struct with a pointer", transparentFor[withPointer](t), false},
		{"map", transparentFor[map[string]int64](t), false},
		{"self-encoding type", transparentFor[holdsSelfEncoded](t), false},
		{"a codec of the user's own", Transparent(Codec[int64](userInt64{})), false},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: Transparent = %v, want %v", c.name, c.got, c.want)
		}
	}
}

type userInt64 struct{}

func (userInt64) Append(dst []byte, v int64) []byte        { return Int64().Append(dst, v) }
func (userInt64) Decode(src []byte, v *int64) (int, error) { return Int64().Decode(src, v) }

type sharedRecord struct{ V []int64 }

func (r sharedRecord) AppendBinary(dst []byte) ([]byte, error) {
	return MustFor[[]int64]().Append(dst, r.V), nil
}
func (r *sharedRecord) DecodeBinary(src []byte) (int, error) {
	return MustFor[[]int64]().Decode(src, &r.V)
}
func (sharedRecord) ShareableValue() {}

// A type that declares itself Shareable passes as a value though it holds
// a slice and encodes itself.
func TestATypeThatDeclaresItselfShareableIsTransparent(t *testing.T) {
	if !transparentFor[sharedRecord](t) {
		t.Fatal("Transparent = false for a Shareable type, want true")
	}
}
