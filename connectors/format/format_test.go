package format_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/weir-stream/weir/connectors/format"
)

type bid struct {
	Auction int64  `json:"auction" avro:"auction"`
	Bidder  int64  `json:"bidder" avro:"bidder"`
	Price   int64  `json:"price" avro:"price"`
	Channel string `json:"channel" avro:"channel"`
}

const bidSchema = `{"type":"record","name":"Bid","fields":[
	{"name":"auction","type":"long"},{"name":"bidder","type":"long"},
	{"name":"price","type":"long"},{"name":"channel","type":"string"}]}`

func formats(t *testing.T) []format.Format[bid] {
	t.Helper()
	avro, err := format.New[bid]("avro", bidSchema)
	if err != nil {
		t.Fatal(err)
	}
	js, err := format.New[bid]("json", "")
	if err != nil {
		t.Fatal(err)
	}
	return []format.Format[bid]{js, avro}
}

func TestRoundTripKeepsTheValue(t *testing.T) {
	for _, f := range formats(t) {
		want := bid{Auction: 1000, Bidder: -7, Price: 1 << 40, Channel: "<Google>"}
		b, err := f.Encode(want)
		if err != nil {
			t.Fatalf("%s: %v", f.Name(), err)
		}
		got := bid{Channel: "left over"}
		if err := f.Decode(b, &got); err != nil {
			t.Fatalf("%s: %v", f.Name(), err)
		}
		if got != want {
			t.Errorf("%s: got %+v, want %+v", f.Name(), got, want)
		}
	}
}

func TestJSONEncodesOneLineWithoutHTMLEscaping(t *testing.T) {
	b, err := format.JSON[bid]().Encode(bid{Channel: "a<b>"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"auction":0,"bidder":0,"price":0,"channel":"a<b>"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestDecodeErrorsNameFormatTypeAndCause(t *testing.T) {
	for _, f := range formats(t) {
		v := bid{Price: 5}
		bad := []byte(`{"auction": "x"`)
		if f.Name() == "avro" {
			bad = []byte{0x02} // auction, then nothing
		}
		err := f.Decode(bad, &v)
		if !errors.Is(err, format.ErrDecode) {
			t.Fatalf("%s: got %v, want an error wrapping ErrDecode", f.Name(), err)
		}
		var fe *format.Error
		if !errors.As(err, &fe) || fe.Format != f.Name() || fe.Op != "decode" {
			t.Errorf("%s: got %#v, want a *format.Error for decode", f.Name(), err)
		}
		if msg := err.Error(); !strings.Contains(msg, "format_test.bid") || !strings.HasPrefix(msg, f.Name()+": cannot decode") {
			t.Errorf("%s: message %q does not say format and type", f.Name(), msg)
		}
		if v != (bid{}) {
			t.Errorf("%s: after a failed Decode the value is %+v, want zero", f.Name(), v)
		}
	}
}

func TestJSONRejectsTrailingData(t *testing.T) {
	var v bid
	if err := format.JSON[bid]().Decode([]byte(`{"price":1} {"price":2}`), &v); !errors.Is(err, format.ErrDecode) {
		t.Errorf("got %v, want ErrDecode", err)
	}
	if err := format.JSON[bid]().Decode([]byte(" {\"price\":1}\n"), &v); err != nil || v.Price != 1 {
		t.Errorf("got %v, %+v; want white space accepted", err, v)
	}
}

func TestBadOptionsFailAtConstruction(t *testing.T) {
	type noChannel struct {
		Auction int64 `avro:"auction"`
	}
	cases := []struct {
		name, schema, want string
		build              func(name, schema string) error
	}{
		{"xml", "", `unknown format "xml"`, nil},
		{"json", bidSchema, "takes no schema", nil},
		{"avro", "", "schema is required", nil},
		{"avro", `{"type":"record"`, "does not parse", nil},
		{"avro", bidSchema, "does not fit the schema", func(n, s string) error { _, err := format.New[noChannel](n, s); return err }},
	}
	for _, c := range cases {
		var err error
		if c.build != nil {
			err = c.build(c.name, c.schema)
		} else {
			_, err = format.New[bid](c.name, c.schema)
		}
		if !errors.Is(err, format.ErrOption) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%q, %.20q): got %v, want ErrOption saying %q", c.name, c.schema, err, c.want)
		}
	}
}

func TestAvroRejectsTrailingBytes(t *testing.T) {
	f, err := format.Avro[bid](bidSchema)
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.Encode(bid{Price: 3})
	if err != nil {
		t.Fatal(err)
	}
	var v bid
	if err := f.Decode(append(b, 0), &v); !errors.Is(err, format.ErrDecode) || !strings.Contains(err.Error(), "left after") {
		t.Errorf("got %v, want ErrDecode for trailing bytes", err)
	}
}

// strict has an UnmarshalJSON method, which Decode calls directly.
type strict struct{ N int64 }

func (s *strict) UnmarshalJSON(data []byte) error {
	var raw struct{ N *int64 }
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	if raw.N == nil {
		return errors.New(`missing field "N"`)
	}
	s.N = *raw.N
	return nil
}

// What encoding/json would turn silently into another value is a decode
// error: null, bytes that are not UTF-8, a field the type requires.
func TestJSONRejectsNullInvalidUTF8AndMissingFields(t *testing.T) {
	var v bid
	for _, doc := range []string{"null", " null\n", "{\"channel\":\"\xff\"}", "{\"channel\":\"\xfe\"}"} {
		if err := format.JSON[bid]().Decode([]byte(doc), &v); !errors.Is(err, format.ErrDecode) {
			t.Errorf("Decode(%q) = %v, want ErrDecode", doc, err)
		}
	}
	if err := format.JSON[bid]().Decode([]byte("null"), &v); !errors.Is(err, format.ErrNull) {
		t.Errorf("Decode(null) = %v, want ErrNull", err)
	}
	var s strict
	for doc, want := range map[string]string{
		`{"N":1} {"N":2}`: "invalid character '{' after top-level value",
		`{}`:              `missing field "N"`,
		`{"N":"x"}`:       "cannot unmarshal string",
	} {
		if err := format.JSON[strict]().Decode([]byte(doc), &s); !errors.Is(err, format.ErrDecode) || !strings.Contains(err.Error(), want) {
			t.Errorf("Decode(%s) = %v, want ErrDecode saying %q", doc, err, want)
		}
	}
	if err := format.JSON[strict]().Decode([]byte(" {\"N\":7}\n"), &s); err != nil || s.N != 7 {
		t.Errorf("Decode = %v, %+v; want N 7", err, s)
	}
}
