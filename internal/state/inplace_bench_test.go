package state

import (
	"fmt"
	"maps"
	"testing"

	"github.com/weir-stream/weir/codec"
)

// BenchmarkInPlaceValues compares, per value of a table of accumulators
// holding a 10-entry map, what the operator's goroutine pays at each
// checkpoint: encoding the table at the snapshot (what InPlace does),
// against copying each value on its first access after the snapshot,
// through the codec or by a hand-written deep copy (the least any
// generic copier could cost), when every value is touched between two
// checkpoints. Copying leaves the encoding to another goroutine.
func BenchmarkInPlaceValues(b *testing.B) {
	type acc struct{ URLs map[string]bool }
	const keys = 10_000
	vc := codec.MustFor[acc]()
	newTable := func(inPlace bool) (*Backend, *Table[int64, acc]) {
		be := NewBackend(0, 1, 1)
		t, err := Register(be, "accs", TableOptions[int64, acc]{Key: codec.Int64(), Value: vc, InPlace: inPlace})
		if err != nil {
			b.Fatal(err)
		}
		for k := range int64(keys) {
			a := acc{URLs: map[string]bool{}}
			for u := range 10 {
				a.URLs[fmt.Sprintf("/page/%d/%d", k, u)] = true
			}
			t.Put(0, k, a)
		}
		return be, t
	}
	b.Run("encode-at-snapshot", func(b *testing.B) {
		be, _ := newTable(true)
		for b.Loop() {
			snap(b, be)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*keys), "ns/value")
	})
	copyEach := func(b *testing.B, clone func(acc) acc) {
		be, t := newTable(false)
		for b.Loop() {
			snap(b, be)
			for k := range int64(keys) {
				v, _ := t.Get(0, k)
				t.Put(0, k, clone(v))
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*keys), "ns/value")
	}
	b.Run("copy-through-codec", func(b *testing.B) {
		var buf []byte
		copyEach(b, func(v acc) acc {
			buf = vc.Append(buf[:0], v)
			var c acc
			if _, err := vc.Decode(buf, &c); err != nil {
				b.Fatal(err)
			}
			return c
		})
	})
	b.Run("copy-by-hand", func(b *testing.B) {
		copyEach(b, func(v acc) acc { return acc{URLs: maps.Clone(v.URLs)} })
	})
}
