package codec_test

import (
	"errors"
	"reflect"
	"testing"
	"unsafe"

	"github.com/weir-stream/weir/codec"
)

type Foo struct {
	Bar chan int
}

type Deep struct {
	A struct {
		B []struct {
			F func()
		}
	}
}

type WithMap struct {
	M map[string]any
}

type WithKey struct {
	M map[complex64]int
}

type WithUnsafe struct {
	P unsafe.Pointer
}

type Hidden struct {
	Visible int
	secret  string
}

type OnlyDecodes struct{ X int }

func (*OnlyDecodes) DecodeBinary(src []byte) (int, error) { return 0, nil }

// forErr returns the error For[T] reports, checking that MustFor panics
// with the same error.
func forErr[T any](t *testing.T) error {
	t.Helper()
	_, err := codec.For[T]()
	func() {
		defer func() {
			if r := recover(); r != err {
				t.Errorf("MustFor[%v] panicked with %v, want %v", reflect.TypeFor[T](), r, err)
			}
		}()
		codec.MustFor[T]()
	}()
	return err
}

func TestUnsupportedTypes(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"chan", forErr[chan int](t), "codec: no codec for type chan int"},
		{"interface", forErr[any](t), "codec: no codec for type interface {}"},
		{"func", forErr[func()](t), "codec: no codec for type func()"},
		{"complex", forErr[complex128](t), "codec: no codec for type complex128"},
		{"slice of chan", forErr[[]chan int](t), "codec: no codec for type chan int in []chan int"},
		{"field", forErr[Foo](t), "codec: no codec for field Foo.Bar of type chan int"},
		{"pointer to struct", forErr[*Foo](t), "codec: no codec for field Foo.Bar of type chan int"},
		{"slice of struct", forErr[[]Foo](t), "codec: no codec for field []codec_test.Foo[].Bar of type chan int"},
		{"nested", forErr[Deep](t), "codec: no codec for field Deep.A.B[].F of type func()"},
		{"map value", forErr[WithMap](t), "codec: no codec for field WithMap.M[value] of type interface {}"},
		{"map key", forErr[WithKey](t), "codec: no codec for field WithKey.M[key] of type complex64"},
		{"unsafe.Pointer", forErr[WithUnsafe](t), "codec: no codec for field WithUnsafe.P of type unsafe.Pointer"},
		{"unexported", forErr[Hidden](t),
			"codec: unexported field Hidden.secret of type string (codec encodes exported fields only: export it or tag it `codec:\"-\"`)"},
		{"half custom", forErr[OnlyDecodes](t),
			"codec: no codec for type codec_test.OnlyDecodes: *codec_test.OnlyDecodes implements codec.Unmarshaler but codec_test.OnlyDecodes does not implement codec.Marshaler"},
	}
	for _, tt := range tests {
		if tt.err == nil {
			t.Errorf("%s: no error, want %q", tt.name, tt.want)
			continue
		}
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
		var ute *codec.UnsupportedTypeError
		if !errors.As(tt.err, &ute) {
			t.Errorf("%s: error %T is not an *UnsupportedTypeError", tt.name, tt.err)
		}
	}
}

func TestUnsupportedTypeErrorFields(t *testing.T) {
	var ute *codec.UnsupportedTypeError
	if !errors.As(forErr[Deep](t), &ute) {
		t.Fatal("no *UnsupportedTypeError")
	}
	if ute.Root != reflect.TypeFor[Deep]() || ute.Type != reflect.TypeFor[func()]() || ute.Path != "Deep.A.B[].F" || ute.Unexported {
		t.Fatalf("got %+v", *ute)
	}
	// The error is cached with the codec: asking again gives the same one.
	if _, err := codec.For[Deep](); err != error(ute) {
		t.Fatalf("second For returned %v, want the cached %v", err, ute)
	}
}
