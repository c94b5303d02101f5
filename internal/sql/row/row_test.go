package row

import (
	"bytes"
	"errors"
	"testing"
)

func TestARowDecodesToWhatWasEncoded(t *testing.T) {
	in := Row{Op: UpdateAfter, V: []Value{Null(), Bool(true), Int(-7), BigInt(1 << 40), Double(0.5), Decimal(-12345), String("héllo"), Timestamp(1700000000123), Interval(4000)}}
	b, _ := in.AppendBinary([]byte{9})
	var out Row
	n, err := out.DecodeBinary(b[1:])
	if err != nil || n != len(b)-1 {
		t.Fatalf("decode: n=%d err=%v, want n=%d", n, err, len(b)-1)
	}
	if out.Op != in.Op || !EqualValues(in, out) {
		t.Fatalf("got %+v, want %+v", out, in)
	}
	for cut := range len(b) - 1 {
		if _, err := new(Row).DecodeBinary(b[1 : 1+cut]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut at %d: err %v, want ErrCorrupt", cut, err)
		}
	}
}

// SkipBinary measures what DecodeBinary would decode, and AppendShared
// decodes the same values, sharing the encoding's string bytes.
func TestARowDecodesSharingItsEncoding(t *testing.T) {
	in := Row{Op: Insert, V: []Value{Null(), String("héllo"), String(""), BigInt(-3), Timestamp(17)}}
	b, _ := in.AppendBinary(nil)
	b = append(b, 0xff) // what follows the row is not read
	n, err := SkipBinary(b)
	if err != nil || n != len(b)-1 {
		t.Fatalf("skip: n=%d err=%v, want n=%d", n, err, len(b)-1)
	}
	prefix := []Value{Bool(true)}
	got, err := AppendShared(prefix, b[:n])
	if err != nil || len(got) != 1+len(in.V) || !Equal(got[0], prefix[0]) || !EqualValues(Row{V: got[1:]}, in) {
		t.Fatalf("AppendShared: got %+v, %v; want %+v after %+v", got, err, in.V, prefix)
	}
	b[bytes.Index(b, []byte("héllo"))] = 'H'
	if got[2].S != "Héllo" {
		t.Fatalf("the string %q does not share the encoding's bytes", got[2].S)
	}
	for cut := range n {
		if _, err := SkipBinary(b[:cut]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("skip cut at %d: err %v, want ErrCorrupt", cut, err)
		}
		if _, err := AppendShared(nil, b[:cut]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("AppendShared cut at %d: err %v, want ErrCorrupt", cut, err)
		}
	}
}

func TestKeysOfEqualColumnsAreEqual(t *testing.T) {
	a := New(BigInt(1), String("x"), Double(2))
	b := New(BigInt(1), String("y"), Double(2))
	if string(Key(nil, a, []int{0, 2})) != string(Key(nil, b, []int{0, 2})) {
		t.Fatal("rows equal at the key columns have different keys")
	}
	if string(Key(nil, a, []int{1})) == string(Key(nil, b, []int{1})) {
		t.Fatal("rows different at the key column have equal keys")
	}
	if Compare(Null(), BigInt(-1)) >= 0 || Compare(String("a"), String("b")) >= 0 || Compare(Double(2), Double(1)) <= 0 {
		t.Fatal("Compare orders wrongly")
	}
}

// ValuesOffset finds the first value after value counts of every width.
func TestValuesOffsetSkipsTheHeader(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 16383, 16384} {
		r := Row{V: make([]Value, n)}
		b, _ := r.AppendBinary(nil)
		if got, want := ValuesOffset(n), len(b)-n; got != want { // a NULL encodes as one byte
			t.Errorf("ValuesOffset(%d) = %d, want %d", n, got, want)
		}
	}
}
