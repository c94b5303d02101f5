package state

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/weir-stream/weir/codec"
)

type countV1 struct {
	Count int32
	Note  string
}

type countV2 struct {
	Max   int64 `codec:"default=-1"`
	Count int64
}

type countBad struct{ Count string }

func kgOf(k int64) int { return int(uint64(k) % 4) }

// fill registers the table name of V values in a new backend owning key
// groups [0, 4), puts the entries of vals and returns its snapshot.
func fill[V any](t *testing.T, name string, vals map[int64]V, value codec.Codec[V]) []byte {
	t.Helper()
	b := NewBackend(0, 4, 4)
	tb, err := Register(b, name, TableOptions[int64, V]{Key: codec.Int64(), Value: value, KeyGroup: kgOf})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range vals {
		tb.Put(b.Shard(kgOf(k)), k, v)
	}
	return snap(t, b)
}

// restoreTable restores snaps into a backend owning key groups [0, 4) and
// registers the table name of V values.
func restoreTable[V any](name string, snaps ...[]byte) (*Table[int64, V], *Backend, error) {
	b := NewBackend(0, 4, 4)
	if err := b.Restore(snaps...); err != nil {
		return nil, nil, err
	}
	tb, err := Register(b, name, TableOptions[int64, V]{Key: codec.Int64(), Value: codec.MustFor[V](), KeyGroup: kgOf})
	return tb, b, err
}

func entries[V any](tb *Table[int64, V]) map[int64]V {
	out := map[int64]V{}
	for s := range tb.Shards() {
		tb.All(s, func(k int64, v V) bool { out[k] = v; return true })
	}
	return out
}

func TestARestoreConvertsValuesWrittenUnderAnEarlierSchema(t *testing.T) {
	data := fill(t, "counts", map[int64]countV1{1: {Count: 3, Note: "a"}, 6: {Count: -2, Note: "b"}}, codec.MustFor[countV1]())
	// Twice: from the snapshot of two subtasks, which record the same schema.
	tb, _, err := restoreTable[countV2]("counts", data, fill(t, "counts", map[int64]countV1{7: {Count: 9}}, codec.MustFor[countV1]()))
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]countV2{1: {Max: -1, Count: 3}, 6: {Max: -1, Count: -2}, 7: {Max: -1, Count: 9}}
	if got := entries(tb); !reflect.DeepEqual(got, want) {
		t.Fatalf("restored %v, want %v", got, want)
	}
}

func TestAnIncompatibleValueChangeFailsTheRegistrationNamingStateAndField(t *testing.T) {
	data := fill(t, "counts", map[int64]countV1{1: {Count: 3}}, codec.MustFor[countV1]())
	_, _, err := restoreTable[countBad]("counts", data)
	if !errors.Is(err, codec.ErrIncompatible) {
		t.Fatalf("restoring string counts over int32 ones: %v; want ErrIncompatible", err)
	}
	for _, want := range []string{`restoring state "counts"`, "its values changed", "field countBad.Count changed from int32 to string"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestKeysMustKeepTheirSchema(t *testing.T) {
	data := fill(t, "counts", map[int64]int64{1: 1}, codec.Int64())
	b := NewBackend(0, 4, 4)
	if err := b.Restore(data); err != nil {
		t.Fatal(err)
	}
	_, err := Register(b, "counts", TableOptions[string, int64]{Key: codec.String(), Value: codec.Int64()})
	if !errors.Is(err, codec.ErrIncompatible) || !strings.Contains(err.Error(), "the keys changed from int64 to string") {
		t.Fatalf("restoring int64 keys as strings: %v", err)
	}
}

// opaque hides a codec's schema, as a user's own codec has none.
type opaque[T any] struct{ codec.Codec[T] }

func TestStateWithoutARecordedSchemaRestoresAsWritten(t *testing.T) {
	// Users' codecs record no schema, like snapshots of an older weir.
	src := NewBackend(0, 4, 4)
	w, err := Register(src, "counts", TableOptions[int64, countV1]{
		Key: opaque[int64]{codec.Int64()}, Value: opaque[countV1]{codec.MustFor[countV1]()}, KeyGroup: kgOf})
	if err != nil {
		t.Fatal(err)
	}
	w.Put(src.Shard(kgOf(2)), 2, countV1{Count: 5, Note: "x"})
	data := snap(t, src)
	if strings.Contains(string(data), schemaPrefix) {
		t.Fatal("a codec without a schema recorded one")
	}
	tb, _, err := restoreTable[countV1]("counts", data)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := entries(tb), map[int64]countV1{2: {Count: 5, Note: "x"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("restored %v, want %v", got, want)
	}
}

func TestAnUnclaimedPartKeepsItsSchemaThroughLaterSnapshots(t *testing.T) {
	data := fill(t, "counts", map[int64]countV1{3: {Count: 4}}, codec.MustFor[countV1]())
	b := NewBackend(0, 4, 4)
	if err := b.Restore(data); err != nil {
		t.Fatal(err)
	}
	// Another part is registered; "counts" is not, and is carried over.
	if _, err := Register(b, "other", TableOptions[int64, string]{Key: codec.Int64(), Value: codec.String(), KeyGroup: kgOf}); err != nil {
		t.Fatal(err)
	}
	again := snap(t, b)
	tb, b2, err := restoreTable[countV2]("counts", again)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := entries(tb), map[int64]countV2{3: {Max: -1, Count: 4}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("restored %v, want %v", got, want)
	}
	// Registered, the part records its own schema, once.
	third := snap(t, b2)
	if n := strings.Count(string(third), schemaPrefix+"counts"); n != 1 {
		t.Fatalf("a snapshot after the registration records the schema %d times", n)
	}
	if _, _, err := restoreTable[countV2]("counts", third); err != nil {
		t.Fatal(err)
	}
}

func TestMapValuesEvolveThroughMapCodec(t *testing.T) {
	type accV1 struct{ Sum int32 }
	type accV2 struct {
		N   int
		Sum int64
	}
	b := NewBackend(0, 1, 1)
	tb, err := Register(b, "buckets", TableOptions[int64, map[string]accV1]{Key: codec.Int64(), Value: MapCodec(codec.String(), codec.MustFor[accV1]())})
	if err != nil {
		t.Fatal(err)
	}
	tb.Put(0, 10, map[string]accV1{"a": {1}, "b": {2}})
	data := snap(t, b)
	r := NewBackend(0, 1, 1)
	if err := r.Restore(data); err != nil {
		t.Fatal(err)
	}
	rt, err := Register(r, "buckets", TableOptions[int64, map[string]accV2]{Key: codec.Int64(), Value: MapCodec(codec.String(), codec.MustFor[accV2]())})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := rt.Get(0, 10)
	if want := map[string]accV2{"a": {Sum: 1}, "b": {Sum: 2}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("restored %v, want %v", got, want)
	}
}

func TestTimerKeysMustKeepTheirSchema(t *testing.T) {
	b := NewBackend(0, 1, 1)
	ts, err := RegisterTimers(b, "timers", codec.Int64(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ts.Register(5, 1)
	data := snap(t, b)
	r := NewBackend(0, 1, 1)
	if err := r.Restore(data); err != nil {
		t.Fatal(err)
	}
	if _, err := RegisterTimers(r, "timers", codec.String(), nil); !errors.Is(err, codec.ErrIncompatible) {
		t.Fatalf("restoring int64 timer keys as strings: %v", err)
	}
}

func TestMapValuesEvolveBehindAKeyCodecWithoutASchema(t *testing.T) {
	type accV1 struct{ Sum int32 }
	type accV2 struct {
		N   int
		Sum int64
	}
	keys := opaque[string]{codec.String()}
	b := NewBackend(0, 1, 1)
	tb, err := Register(b, "buckets", TableOptions[int64, map[string]accV1]{Key: codec.Int64(), Value: MapCodec[string](keys, codec.MustFor[accV1]())})
	if err != nil {
		t.Fatal(err)
	}
	tb.Put(0, 10, map[string]accV1{"a": {1}})
	r := NewBackend(0, 1, 1)
	if err := r.Restore(snap(t, b)); err != nil {
		t.Fatal(err)
	}
	rt, err := Register(r, "buckets", TableOptions[int64, map[string]accV2]{Key: codec.Int64(), Value: MapCodec[string](keys, codec.MustFor[accV2]())})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := rt.Get(0, 10); !reflect.DeepEqual(got, map[string]accV2{"a": {Sum: 1}}) {
		t.Fatalf("restored %v", got)
	}
}
