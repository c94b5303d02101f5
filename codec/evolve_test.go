package codec_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir/codec"
)

// migrate encodes v with For[W], and decodes it with the reader For[R]
// builds for W's schema, after a round trip of the schema through its
// binary form.
func migrate[W, R any](t *testing.T, v W) R {
	t.Helper()
	wc := codec.MustFor[W]()
	schema, err := codec.ParseSchema(wc.(codec.Evolvable[W]).Schema().Append(nil))
	if err != nil {
		t.Fatalf("parsing the schema of %T: %v", v, err)
	}
	rc, err := codec.MustFor[R]().(codec.Evolvable[R]).Reader(schema)
	if err != nil {
		t.Fatalf("reader of %T for %v: %v", *new(R), schema, err)
	}
	data := wc.Append(nil, v)
	var got R
	n, err := rc.Decode(append(data, 0xff), &got) // a trailing byte must stay unread
	if err != nil || n != len(data) {
		t.Fatalf("decoding %T as %T: %d of %d bytes, %v", v, got, n, len(data), err)
	}
	return got
}

func readerErr[W, R any](t *testing.T) error {
	t.Helper()
	w := codec.MustFor[W]().(codec.Evolvable[W]).Schema()
	_, err := codec.MustFor[R]().(codec.Evolvable[R]).Reader(w)
	if err == nil {
		t.Fatalf("reading %v as %v: no error", w, reflect.TypeFor[R]())
	}
	return err
}

type statsV1 struct {
	Count int32
	Name  string
	Tags  []string
	Score float32
}

type statsV2 struct {
	Score float64       // widened, moved
	Count int64         // widened
	Extra []int         // added
	Level int           `codec:"default=3"` // added, with a default
	Since time.Duration `codec:"default=1m30s"`
	Label string        `codec:"default=none"`
	Tags  []string
}

func TestAReaderMatchesFieldsByNameAndWidensNumbers(t *testing.T) {
	got := migrate[statsV1, statsV2](t, statsV1{Count: -7, Name: "dropped", Tags: []string{"a", "b"}, Score: 1.5})
	want := statsV2{Score: 1.5, Count: -7, Level: 3, Since: 90 * time.Second, Label: "none", Tags: []string{"a", "b"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

type innerV1 struct {
	A int8
	B string
}

type innerV2 struct {
	B string
	C bool
	A int64
}

type nestV1 struct {
	One   innerV1
	List  []innerV1
	ByKey map[string]innerV1
	Ptr   *innerV1
	Nil   *innerV1
	Fixed [2]innerV1
	Keys  map[int16]float32
}

type nestV2 struct {
	Keys  map[int64]float64
	Fixed [2]innerV2
	Nil   *innerV2
	Ptr   *innerV2
	ByKey map[string]innerV2
	List  []innerV2
	One   innerV2
}

func TestAReaderConvertsNestedStructsInsideContainersAndPointers(t *testing.T) {
	v1 := nestV1{
		One:   innerV1{1, "one"},
		List:  []innerV1{{2, "two"}, {3, "three"}},
		ByKey: map[string]innerV1{"x": {4, "four"}, "y": {5, "five"}},
		Ptr:   &innerV1{6, "six"},
		Fixed: [2]innerV1{{7, "seven"}, {8, "eight"}},
		Keys:  map[int16]float32{-1: 0.5, 300: 2},
	}
	got := migrate[nestV1, nestV2](t, v1)
	want := nestV2{
		One:   innerV2{A: 1, B: "one"},
		List:  []innerV2{{A: 2, B: "two"}, {A: 3, B: "three"}},
		ByKey: map[string]innerV2{"x": {A: 4, B: "four"}, "y": {A: 5, B: "five"}},
		Ptr:   &innerV2{A: 6, B: "six"},
		Fixed: [2]innerV2{{A: 7, B: "seven"}, {A: 8, B: "eight"}},
		Keys:  map[int64]float64{-1: 0.5, 300: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

type dropV1 struct {
	Keep    int64
	Gone    map[string][]*innerV1
	When    time.Time
	Blob    [3]byte
	Fixed   [2]float64
	Flag    bool
	Last    uint16
	Scratch int64 `codec:"-"`
}

type dropV2 struct {
	Last    uint64
	Keep    int64
	Scratch int64 `codec:"-"`
}

func TestAReaderSkipsRemovedFieldsOfEveryKind(t *testing.T) {
	v1 := dropV1{
		Keep: 42, Gone: map[string][]*innerV1{"a": {{1, "x"}, nil}, "b": nil},
		When: time.Date(1500, 1, 2, 3, 4, 5, 6, time.UTC), Blob: [3]byte{1, 2, 3},
		Fixed: [2]float64{1, 2}, Flag: true, Last: 65535, Scratch: 9,
	}
	got := migrate[dropV1, dropV2](t, v1)
	if want := (dropV2{Last: 65535, Keep: 42}); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

type tree struct {
	Value int32
	Kids  []tree
}

type treeV2 struct {
	Kids  []treeV2
	Value int64
	Seen  bool
}

func TestAReaderConvertsRecursiveTypes(t *testing.T) {
	v1 := tree{Value: 1, Kids: []tree{{Value: 2}, {Value: 3, Kids: []tree{{Value: 4}}}}}
	got := migrate[tree, treeV2](t, v1)
	want := treeV2{Value: 1, Kids: []treeV2{{Value: 2}, {Value: 3, Kids: []treeV2{{Value: 4}}}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	s := codec.MustFor[tree]().(codec.Evolvable[tree]).Schema()
	back, err := codec.ParseSchema(s.Append(nil))
	if err != nil || !back.Equal(s) || back.String() != s.String() {
		t.Fatalf("schema %v read back as %v (%v)", s, back, err)
	}
}

func TestAReaderOfAnUnchangedOrOnlyWidenedTypeIsTheCodecItself(t *testing.T) {
	c := codec.MustFor[statsV1]()
	ev := c.(codec.Evolvable[statsV1])
	for _, w := range []codec.Schema{ev.Schema(), {}} {
		if r, err := ev.Reader(w); err != nil || r != c {
			t.Errorf("Reader(%v) = %v, %v; want the codec itself", w, r, err)
		}
	}
	type narrow struct{ A []int32 }
	type wide struct{ A []int64 }
	wc := codec.MustFor[wide]()
	if r, err := wc.(codec.Evolvable[wide]).Reader(codec.MustFor[narrow]().(codec.Evolvable[narrow]).Schema()); err != nil || r != wc {
		t.Errorf("reading []int32 as []int64 = %v, %v; want the codec itself", r, err)
	}
	i64 := codec.Int64()
	if r, err := i64.(codec.Evolvable[int64]).Reader(codec.Int32().(codec.Evolvable[int32]).Schema()); err != nil || r != i64 {
		t.Errorf("reading int32 as int64 = %v, %v; want the codec itself", r, err)
	}
	if got := migrate[float32, float64](t, 0.25); got != 0.25 {
		t.Errorf("float32 0.25 read as float64 %v", got)
	}
}

type countV1 struct{ Count string }
type countV2 struct{ Count int }

type holder struct{ Inner innerV1 }
type holderV2 struct {
	Inner struct {
		A int8
		B []byte
	}
}

type narrowV1 struct{ N int64 }
type narrowV2 struct{ N int32 }

type signV1 struct{ N uint32 }
type signV2 struct{ N int64 }

type arrV1 struct{ A [2]int64 }
type arrV2 struct{ A [3]int64 }

type custom struct{ b byte }

func (c custom) AppendBinary(dst []byte) ([]byte, error) { return append(dst, c.b), nil }
func (c *custom) DecodeBinary(src []byte) (int, error) {
	if len(src) == 0 {
		return 0, codec.ErrCorrupt
	}
	c.b = src[0]
	return 1, nil
}

type withCustom struct {
	A int64
	C custom
}
type withoutCustom struct{ A int64 }

func TestAnIncompatibleChangeNamesTheFieldAndWhatChanged(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{readerErr[countV1, countV2](t), "codec: field countV2.Count changed from string to int, which is not a compatible change"},
		{readerErr[holder, holderV2](t), "field holderV2.Inner.B changed from string to []uint8"},
		{readerErr[narrowV1, narrowV2](t), "field narrowV2.N changed from int64 to int32"},
		{readerErr[signV1, signV2](t), "field signV2.N changed from uint32 to int64"},
		{readerErr[arrV1, arrV2](t), "field arrV2.A changed from [2]int64 to [3]int64"},
		{readerErr[string, int64](t), "codec: int64 changed from string to int64"},
		{readerErr[[]countV1, map[string]countV1](t), "changed from []struct{Count string} to map[string]codec_test.countV1"},
		{readerErr[withCustom, withoutCustom](t), "field withoutCustom.C was removed, but its value encodes itself"},
	} {
		if !errors.Is(c.err, codec.ErrIncompatible) {
			t.Errorf("%v does not wrap ErrIncompatible", c.err)
		}
		if !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("error %q does not say %q", c.err, c.want)
		}
	}
}

func TestAFieldKeepsItsCustomEncodingAcrossVersions(t *testing.T) {
	type v2 struct {
		C custom
		B bool `codec:"default=true"`
	}
	got := migrate[withCustom, v2](t, withCustom{A: 1, C: custom{7}})
	if want := (v2{C: custom{7}, B: true}); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestABadDefaultFailsFor(t *testing.T) {
	type badNumber struct {
		N int8 `codec:"default=300"`
	}
	type badKind struct {
		S []int `codec:"default=1"`
	}
	if _, err := codec.For[badNumber](); err == nil || !strings.Contains(err.Error(), `default "300" is not a valid int8`) {
		t.Errorf("For with default=300 on an int8: %v", err)
	}
	if _, err := codec.For[badKind](); err == nil || !strings.Contains(err.Error(), "booleans, numbers, strings and durations only") {
		t.Errorf("For with a default on a slice: %v", err)
	}
}

func TestASchemaReadsBackAndDescribesItself(t *testing.T) {
	s := codec.MustFor[nestV1]().(codec.Evolvable[nestV1]).Schema()
	back, err := codec.ParseSchema(s.Append(nil))
	if err != nil || !back.Equal(s) {
		t.Fatalf("schema read back as %v (%v)", back, err)
	}
	want := "struct{One struct{A int8; B string}; List []struct{A int8; B string}; ByKey map[string]struct{A int8; B string}; " +
		"Ptr *struct{A int8; B string}; Nil *struct{A int8; B string}; Fixed [2]struct{A int8; B string}; Keys map[int16]float32}"
	if got := back.String(); got != want {
		t.Errorf("String() = %s\nwant %s", got, want)
	}
	data := s.Append(nil)
	for i := range data {
		if _, err := codec.ParseSchema(data[:i]); err == nil && i > 0 {
			t.Errorf("a schema cut to %d of %d bytes parsed", i, len(data))
		}
	}
	k, v := codec.String().(codec.Evolvable[string]).Schema(), codec.Int64().(codec.Evolvable[int64]).Schema()
	m := codec.MapSchema(k, v)
	if gk, gv, ok := m.MapParts(); !ok || !gk.Equal(k) || !gv.Equal(v) {
		t.Errorf("MapParts of %v = %v, %v, %v", m, gk, gv, ok)
	}
	if !m.Equal(codec.MustFor[map[string]int64]().(codec.Evolvable[map[string]int64]).Schema()) {
		t.Errorf("MapSchema(string, int64) = %v differs from the schema of map[string]int64", m)
	}
}

// FuzzReaderOfAnySchema reads arbitrary schemas and, for those a reader
// accepts, arbitrary input: neither may panic, and a decoding error must
// wrap ErrCorrupt.
func FuzzReaderOfAnySchema(f *testing.F) {
	for _, s := range []codec.Schema{
		codec.MustFor[nestV1]().(codec.Evolvable[nestV1]).Schema(),
		codec.MustFor[dropV1]().(codec.Evolvable[dropV1]).Schema(),
		codec.MustFor[tree]().(codec.Evolvable[tree]).Schema(),
	} {
		f.Add(s.Append(nil), codec.MustFor[nestV1]().Append(nil, nestV1{List: []innerV1{{1, "a"}}}))
	}
	f.Fuzz(func(t *testing.T, schema, data []byte) {
		s, err := codec.ParseSchema(schema)
		if err != nil {
			if !errors.Is(err, codec.ErrCorrupt) {
				t.Fatalf("ParseSchema: %v does not wrap ErrCorrupt", err)
			}
			return
		}
		_ = s.String()
		try := func(decode func() error) {
			if err := decode(); err != nil && !errors.Is(err, codec.ErrCorrupt) {
				t.Fatalf("decoding under %v: %v does not wrap ErrCorrupt", s, err)
			}
		}
		if r, err := codec.MustFor[nestV2]().(codec.Evolvable[nestV2]).Reader(s); err == nil {
			try(func() error { var v nestV2; _, err := r.Decode(data, &v); return err })
		}
		if r, err := codec.MustFor[treeV2]().(codec.Evolvable[treeV2]).Reader(s); err == nil {
			try(func() error { var v treeV2; _, err := r.Decode(data, &v); return err })
		}
		if r, err := codec.MustFor[dropV2]().(codec.Evolvable[dropV2]).Reader(s); err == nil {
			try(func() error { var v dropV2; _, err := r.Decode(data, &v); return err })
		}
	})
}

func TestParseSchemaRejectsATypeThatContainsItselfInline(t *testing.T) {
	// A struct whose only field is the struct itself: sStruct, one field
	// "X" of sRef 0. No Go type is like that; skipping a value would not end.
	if _, err := codec.ParseSchema([]byte{1, 16, 1, 1, 'X', 22, 0}); !errors.Is(err, codec.ErrCorrupt) {
		t.Fatalf("ParseSchema of an infinite struct: %v", err)
	}
	// Through a slice it is a tree.
	if _, err := codec.ParseSchema([]byte{1, 16, 1, 1, 'X', 17, 22, 0}); err != nil {
		t.Fatalf("ParseSchema of a tree: %v", err)
	}
}
