package codec_test

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-stream/weir/codec"
)

type Celsius float64

type MyBytes []byte

type Inner struct {
	Name  string
	Tags  []string
	Score float32
}

type Outer struct {
	ID     uint64
	Small  int8
	Mid    int16
	Wide   int32
	Big    int64
	I      int
	U8     uint8
	U16    uint16
	U32    uint32
	U      uint
	Uptr   uintptr
	F32    float32
	F64    float64
	Flag   bool
	Text   string
	When   time.Time
	Wait   time.Duration
	In     Inner
	PIn    *Inner
	Ins    []Inner
	Arr    [3]int32
	Hash   [4]byte
	Raw    []byte
	M      map[string]int64
	MS     map[int32]Inner
	PP     **int
	Nested [][]string
	Temp   Celsius
	Blob   MyBytes
	Times  []time.Time
}

func sampleOuter() Outer {
	seven := 7
	p7 := &seven
	return Outer{
		ID: math.MaxUint64, Small: -128, Mid: 1234, Wide: -1 << 31, Big: math.MinInt64, I: -42,
		U8: 255, U16: 65535, U32: 1 << 31, U: 99, Uptr: 0xdead,
		F32: 1.25, F64: -3.5e300, Flag: true, Text: "héllo",
		When: time.Unix(1_700_000_000, 5).UTC(), Wait: 3 * time.Second,
		In:     Inner{Name: "in", Tags: []string{"a", "", "c"}, Score: 0.5},
		PIn:    &Inner{Name: "ptr"},
		Ins:    []Inner{{Name: "x"}, {Tags: []string{"y"}}},
		Arr:    [3]int32{1, -2, 3},
		Hash:   [4]byte{0xde, 0xad, 0xbe, 0xef},
		Raw:    []byte{0, 1, 2},
		M:      map[string]int64{"one": 1, "two": 2, "": 0},
		MS:     map[int32]Inner{-1: {Name: "neg"}, 5: {Score: 5}},
		PP:     &p7,
		Nested: [][]string{{"a"}, nil, {"b", "c"}},
		Temp:   21.5,
		Blob:   MyBytes("blob"),
		Times:  []time.Time{{}, time.Unix(0, 0).UTC()},
	}
}

func TestForRoundTrip(t *testing.T) {
	c, err := codec.For[Outer]()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []Outer{{}, sampleOuter()} {
		roundTrip(t, c, v, func(a, b Outer) bool { return reflect.DeepEqual(a, b) })
	}
}

func TestForKinds(t *testing.T) {
	deep := func(a, b any) bool { return reflect.DeepEqual(a, b) }
	check := func(name string, f func(t *testing.T)) { t.Run(name, f) }
	check("int8", func(t *testing.T) { roundTrip(t, codec.MustFor[int8](), -100, equal) })
	check("uint16", func(t *testing.T) { roundTrip(t, codec.MustFor[uint16](), 40000, equal) })
	check("uintptr", func(t *testing.T) { roundTrip(t, codec.MustFor[uintptr](), 1<<40, equal) })
	check("named float", func(t *testing.T) { roundTrip(t, codec.MustFor[Celsius](), -40, equal) })
	check("named bytes", func(t *testing.T) {
		roundTrip(t, codec.MustFor[MyBytes](), MyBytes("xyz"), func(a, b MyBytes) bool { return bytes.Equal(a, b) })
	})
	check("slice", func(t *testing.T) {
		roundTrip(t, codec.MustFor[[]int64](), []int64{1, -1, 1 << 50}, func(a, b []int64) bool { return deep(a, b) })
	})
	check("array", func(t *testing.T) { roundTrip(t, codec.MustFor[[2]string](), [2]string{"a", "b"}, equal) })
	check("map", func(t *testing.T) {
		roundTrip(t, codec.MustFor[map[string][]int](), map[string][]int{"a": {1}, "b": {2, 3}},
			func(a, b map[string][]int) bool { return deep(a, b) })
	})
	check("pointer", func(t *testing.T) {
		x := 5
		roundTrip(t, codec.MustFor[*int](), &x, func(a, b *int) bool { return *a == *b })
		roundTrip(t, codec.MustFor[*int](), nil, func(a, b *int) bool { return a == nil && b == nil })
	})
	check("struct key", func(t *testing.T) {
		type K struct {
			A string
			B int
		}
		roundTrip(t, codec.MustFor[map[K]bool](), map[K]bool{{"a", 1}: true, {"a", 2}: false, {"", 0}: true},
			func(a, b map[K]bool) bool { return deep(a, b) })
	})
	check("zero-size elements", func(t *testing.T) {
		roundTrip(t, codec.MustFor[[]struct{}](), make([]struct{}, 1000),
			func(a, b []struct{}) bool { return len(a) == len(b) })
		roundTrip(t, codec.MustFor[map[struct{}]struct{}](), map[struct{}]struct{}{{}: {}},
			func(a, b map[struct{}]struct{}) bool { return len(a) == len(b) })
	})
	check("NaN keys", func(t *testing.T) {
		m := map[float64]int{math.NaN(): 2, math.NaN(): 1, math.NaN(): 1, 1: 0}
		enc := roundTrip(t, codec.MustFor[map[float64]int](), m,
			func(a, b map[float64]int) bool { return len(a) == len(b) && a[1] == b[1] })
		for range 10 { // the order of equal keys is deterministic too
			if got := codec.MustFor[map[float64]int]().Append(nil, m); !bytes.Equal(got, enc) {
				t.Fatalf("NaN-keyed map encodings differ:\n% x\n% x", got, enc)
			}
		}
	})
}

type Node struct {
	Val  int
	Next *Node
	Kids []Node
}

func TestForRecursive(t *testing.T) {
	v := Node{Val: 1, Next: &Node{Val: 2, Next: &Node{Val: 3}}, Kids: []Node{{Val: 4}, {Val: 5, Kids: []Node{{Val: 6}}}}}
	roundTrip(t, codec.MustFor[Node](), v, func(a, b Node) bool { return reflect.DeepEqual(a, b) })
}

type base struct{ X int }

type Base struct{ Y string }

type Embeds struct {
	base
	Base
	*Inner
	Z bool
}

type WithSkip struct {
	A     int
	cache map[string]int `codec:"-"`
	Hook  func()         `codec:"-"`
	_     int32
	B     string
}

func TestForStructFields(t *testing.T) {
	e := Embeds{base: base{X: 1}, Base: Base{Y: "y"}, Inner: &Inner{Name: "n"}, Z: true}
	roundTrip(t, codec.MustFor[Embeds](), e, func(a, b Embeds) bool { return reflect.DeepEqual(a, b) })

	c := codec.MustFor[WithSkip]()
	enc := c.Append(nil, WithSkip{A: 1, cache: map[string]int{"x": 1}, Hook: func() {}, B: "b"})
	if want := []byte{2, 1, 'b'}; !bytes.Equal(enc, want) {
		t.Fatalf("Append(WithSkip) = % x, want % x", enc, want)
	}
	got := WithSkip{cache: map[string]int{"old": 1}, Hook: func() {}}
	if _, err := c.Decode(enc, &got); err != nil {
		t.Fatal(err)
	}
	if got.A != 1 || got.B != "b" || got.cache != nil || got.Hook != nil {
		t.Fatalf("Decode(WithSkip) = %+v; want A=1 B=b and skipped fields zeroed", got)
	}
}

// TestForBuiltins checks that For returns the dedicated codecs for basic
// types and caches what it builds.
func TestForBuiltins(t *testing.T) {
	tests := []struct {
		name      string
		got, want any
	}{
		{"int64", codec.MustFor[int64](), codec.Int64()},
		{"int32", codec.MustFor[int32](), codec.Int32()},
		{"int", codec.MustFor[int](), codec.Int()},
		{"uint64", codec.MustFor[uint64](), codec.Uint64()},
		{"uint32", codec.MustFor[uint32](), codec.Uint32()},
		{"float64", codec.MustFor[float64](), codec.Float64()},
		{"float32", codec.MustFor[float32](), codec.Float32()},
		{"bool", codec.MustFor[bool](), codec.Bool()},
		{"string", codec.MustFor[string](), codec.String()},
		{"[]byte", codec.MustFor[[]byte](), codec.Bytes()},
		{"time.Time", codec.MustFor[time.Time](), codec.Time()},
		{"time.Duration", codec.MustFor[time.Duration](), codec.Duration()},
		{"cached struct codec", codec.MustFor[Outer](), codec.MustFor[Outer]()},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: For returned %T %v, want %T %v", tt.name, tt.got, tt.got, tt.want, tt.want)
		}
	}
}

func TestMapDeterministic(t *testing.T) {
	c := codec.MustFor[map[string]int]()
	m1, m2 := map[string]int{}, map[string]int{}
	for i := range 100 {
		k := strings.Repeat("k", i%7) + string(rune('a'+i%26)) + string(rune('A'+i/26))
		m1[k] = i
	}
	for k, v := range m1 { // a different insertion order
		m2[k] = v
	}
	want := c.Append(nil, m1)
	for range 20 {
		if got := c.Append(nil, m2); !bytes.Equal(got, want) {
			t.Fatalf("equal maps encoded differently:\n% x\n% x", got, want)
		}
	}
	// Entries are sorted by encoded key: "a" (1 'a') before "b" (1 'b').
	got := c.Append(nil, map[string]int{"b": 1, "a": 2})
	if want := []byte{2, 1, 'a', 4, 1, 'b', 2}; !bytes.Equal(got, want) {
		t.Fatalf("got % x, want % x", got, want)
	}
}

func TestMapCorrupt(t *testing.T) {
	c := codec.MustFor[map[string]int]()
	tests := []struct {
		name string
		src  []byte
		want string
	}{
		{"out of order", []byte{2, 1, 'b', 2, 1, 'a', 4}, "codec: decoding map[string]int: map entries out of order"},
		{"duplicate", []byte{2, 1, 'a', 2, 1, 'a', 4}, "codec: decoding map[string]int: duplicate map key"},
		{"too many", []byte{5, 1, 'a', 2}, "codec: decoding map[string]int: length 5 exceeds input"},
		{"bad value", []byte{1, 1, 'a', 0x80}, "codec: decoding [value 0] (int): truncated input"},
	}
	for _, tt := range tests {
		var m map[string]int
		n, err := c.Decode(tt.src, &m)
		if !errors.Is(err, codec.ErrCorrupt) || n != 0 {
			t.Errorf("%s: got %d, %v; want ErrCorrupt", tt.name, n, err)
		} else if err.Error() != tt.want {
			t.Errorf("%s: error %q, want %q", tt.name, err, tt.want)
		}
	}
}

// TestDecodeReplaces checks that Decode overwrites the destination rather
// than merging into it or reusing its memory.
func TestDecodeReplaces(t *testing.T) {
	c := codec.MustFor[Outer]()
	old := sampleOuter()
	oldIns := old.Ins
	got := old
	if _, err := c.Decode(c.Append(nil, Outer{Ins: []Inner{{Name: "new"}}}), &got); err != nil {
		t.Fatal(err)
	}
	if want := (Outer{Ins: []Inner{{Name: "new"}}}); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if oldIns[0].Name != "x" {
		t.Fatalf("Decode wrote into the old backing array: %+v", oldIns)
	}
}

func TestDecodeErrorPath(t *testing.T) {
	c := codec.MustFor[Outer]()
	v := sampleOuter()
	v.In.Tags = []string{"a", "bcdef"}
	enc := c.Append(nil, v)
	// Cut the input inside the second tag.
	cut := bytes.Index(enc, []byte("\x05bcdef")) + 3
	var got Outer
	_, err := c.Decode(enc[:cut], &got)
	if want := "codec: decoding Outer.In.Tags[1] (string): length exceeds input"; err == nil || err.Error() != want {
		t.Fatalf("got error %v, want %q", err, want)
	}
}

func TestAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	c := codec.MustFor[benchRecord]()
	buf := c.Append(nil, benchIn)
	var out benchRecord
	tests := []struct {
		name string
		f    func()
		want float64
	}{
		{"encode struct", func() { buf = c.Append(buf[:0], benchIn) }, 0},
		{"decode struct", func() { _, _ = c.Decode(buf, &out) }, 1}, // the Key string
		{"encode int64", func() { buf = codec.Int64().Append(buf[:0], 5) }, 0},
		{"encode named", func() { buf = codec.MustFor[Celsius]().Append(buf[:0], 5) }, 0},
		// AppendBinary with a value receiver gets a copy, so the value
		// need not move to the heap to be encoded.
		{"encode self-encoding", func() { buf = codec.MustFor[Point]().Append(buf[:0], Point{1, 2}) }, 0},
	}
	for _, tt := range tests {
		if got := testing.AllocsPerRun(100, tt.f); got != tt.want {
			t.Errorf("%s: %v allocs, want %v", tt.name, got, tt.want)
		}
	}
}

// concurrentRec is used only by TestConcurrent, so that its codec is built
// while the goroutines race.
type concurrentRec struct {
	O    Outer
	Tree Node
	Next *concurrentRec
}

func TestConcurrent(t *testing.T) {
	v := concurrentRec{O: sampleOuter(), Tree: Node{Val: 1, Kids: []Node{{Val: 2}}}, Next: &concurrentRec{}}
	want := codec.MustFor[Outer]().Append(nil, v.O)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			c, err := codec.For[concurrentRec]()
			if err != nil {
				errs <- err
				return
			}
			oc := codec.MustFor[Outer]()
			var buf []byte
			for range 200 {
				buf = c.Append(buf[:0], v)
				var got concurrentRec
				if _, err := c.Decode(buf, &got); err != nil {
					errs <- err
					return
				}
				if !reflect.DeepEqual(got, v) {
					errs <- errors.New("concurrent round trip mismatch")
					return
				}
				if enc := oc.Append(nil, got.O); !bytes.Equal(enc, want) {
					errs <- errors.New("concurrent encodings differ")
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
