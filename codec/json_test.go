package codec_test

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/weir-stream/weir/codec"
)

type event struct {
	ID    int64             `json:"id"`
	Name  string            `json:"name"`
	Tags  []string          `json:"tags,omitempty"`
	Attrs map[string]string `json:"attrs,omitempty"`
}

func TestJSONRoundTrip(t *testing.T) {
	c := codec.JSON[event]()
	for _, v := range []event{{}, {ID: -1, Name: "x", Tags: []string{"a"}, Attrs: map[string]string{"k": "v"}}} {
		roundTrip(t, c, v, func(a, b event) bool { return reflect.DeepEqual(a, b) })
	}
	roundTrip(t, codec.JSON[[]float64](), []float64{math.Pi, -0.1, 1e300}, func(a, b []float64) bool { return reflect.DeepEqual(a, b) })
	// A number has valid prefixes, so check it without roundTrip.
	var f float64
	if n, err := codec.JSON[float64]().Decode([]byte("2.5e-3 "), &f); n != 6 || err != nil || f != 2.5e-3 {
		t.Errorf("Decode(2.5e-3) = %v, %d, %v", f, n, err)
	}
	if got, want := string(c.Append([]byte("> "), event{ID: 1, Name: "n"})), `> {"id":1,"name":"n"}`; got != want {
		t.Errorf("Append = %s, want %s", got, want)
	}
}

func TestJSONStream(t *testing.T) {
	c := codec.JSON[event]()
	src := []byte(" \n{\"id\":1}\n{\"id\":2,\"extra\":true}\n")
	var ids []int64
	for {
		var e event
		n, err := c.Decode(src, &e)
		if err != nil {
			if len(ids) == 2 && errors.Is(err, codec.ErrCorrupt) {
				break // only white space left
			}
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
		src = src[n:]
	}
	if want := []int64{1, 2}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("decoded ids %v, want %v", ids, want)
	}
}

func TestJSONDecodeResets(t *testing.T) {
	c := codec.JSON[event]()
	v := event{ID: 9, Tags: []string{"old"}, Attrs: map[string]string{"old": "1"}}
	if _, err := c.Decode([]byte(`{"name":"new","attrs":{"k":"v"}}`), &v); err != nil {
		t.Fatal(err)
	}
	if want := (event{Name: "new", Attrs: map[string]string{"k": "v"}}); !reflect.DeepEqual(v, want) {
		t.Fatalf("got %+v, want %+v", v, want)
	}
}

func TestJSONCorrupt(t *testing.T) {
	c := codec.JSON[event]()
	tests := []struct {
		name, src, want string
	}{
		{"empty", "", "codec: decoding JSON codec_test.event: no JSON document"},
		{"blank", "  \n", "codec: decoding JSON codec_test.event: no JSON document"},
		{"truncated", `{"id":1`, "codec: decoding JSON codec_test.event: truncated JSON document: unexpected EOF"},
		{"syntax", `{"id":}`, "codec: decoding JSON codec_test.event: invalid JSON: invalid character '}' looking for beginning of value"},
		{"type", `{"id":"x"}`, "codec: decoding JSON codec_test.event: invalid JSON: json: cannot unmarshal string into Go struct field event.id of type int64"},
	}
	for _, tt := range tests {
		var e event
		n, err := c.Decode([]byte(tt.src), &e)
		if !errors.Is(err, codec.ErrCorrupt) || n != 0 {
			t.Errorf("%s: got %d, %v; want ErrCorrupt", tt.name, n, err)
		} else if err.Error() != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, err, tt.want)
		}
	}
	var ute *json.UnmarshalTypeError
	if _, err := c.Decode([]byte(`{"id":"x"}`), new(event)); !errors.As(err, &ute) {
		t.Errorf("type mismatch error %v does not wrap *json.UnmarshalTypeError", err)
	}
}

func TestJSONAppendPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Error("Append(NaN) did not panic")
		}
	}()
	codec.JSON[float64]().Append(nil, math.NaN())
}
