package row

import (
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
