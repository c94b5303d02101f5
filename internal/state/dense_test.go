package state

import (
	"maps"
	"testing"

	"github.com/weir-stream/weir/codec"
)

// A clone may be changed and grown while the Dense it was cloned from,
// which a snapshot holds, still shows the entries it had.
func TestDenseCloneLeavesTheSnapshotsEntriesAsTheyWere(t *testing.T) {
	d := NewDense[int64, int64](0)
	for k := range int64(10) {
		d.Add(k, k*10)
	}
	c := d.Clone()
	for k := range int64(10) {
		i, ok := c.Slot(k)
		if !ok {
			t.Fatalf("the clone lost key %d", k)
		}
		c.Set(i, -1)
	}
	for k := int64(10); k < 100; k++ {
		c.Add(k, k)
	}
	if d.Len() != 10 {
		t.Fatalf("the snapshot's Dense has %d entries, want 10", d.Len())
	}
	for i := range d.Len() {
		if d.Key(i) != int64(i) || d.Value(i) != int64(i)*10 {
			t.Fatalf("entry %d of the snapshot's Dense is %d=%d, want %d=%d", i, d.Key(i), d.Value(i), i, i*10)
		}
	}
	if c.Len() != 100 {
		t.Fatalf("the clone has %d entries, want 100", c.Len())
	}
	for k := range int64(100) {
		want := k
		if k < 10 {
			want = -1
		}
		if v, ok := c.Get(k); !ok || v != want {
			t.Fatalf("clone: %d = %d, %v; want %d", k, v, ok, want)
		}
	}
}

// A Dense is encoded as MapCodec encodes a map, under the same schema, so
// a snapshot of either restores as the other.
func TestDenseCodecReadsAndWritesMapCodecsFormat(t *testing.T) {
	kc, err := codec.For[int64]()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := codec.For[string]()
	if err != nil {
		t.Fatal(err)
	}
	mc, dc := MapCodec(kc, sc), DenseCodec(kc, sc)
	if !mc.(codec.Evolvable[map[int64]string]).Schema().Equal(dc.(codec.Evolvable[*Dense[int64, string]]).Schema()) {
		t.Fatal("the dense codec's schema differs from the map codec's")
	}
	want := map[int64]string{}
	d := NewDense[int64, string](0)
	for k := range int64(50) {
		want[k*7] = string(rune('a' + k%26))
		d.Add(k*7, want[k*7])
	}
	var fromDense map[int64]string
	if _, err := mc.Decode(dc.Append(nil, d), &fromDense); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(fromDense, want) {
		t.Fatalf("a Dense read as a map: %v, want %v", fromDense, want)
	}
	var fromMap *Dense[int64, string]
	data := mc.Append(nil, want)
	n, err := dc.Decode(data, &fromMap)
	if err != nil || n != len(data) {
		t.Fatalf("a map read as a Dense: %d of %d bytes, %v", n, len(data), err)
	}
	if fromMap.Len() != len(want) {
		t.Fatalf("a map read as a Dense has %d entries, want %d", fromMap.Len(), len(want))
	}
	for k, v := range want {
		if got, ok := fromMap.Get(k); !ok || got != v {
			t.Fatalf("a map read as a Dense: %d = %q, %v; want %q", k, got, ok, v)
		}
	}
	if _, err := dc.Decode(data[:len(data)/2], &fromMap); err == nil {
		t.Fatal("a truncated encoding decoded without an error")
	}
}
