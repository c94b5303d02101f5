package tables

import (
	"math/big"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-stream/weir/internal/sql/row"
)

// avroTable has every type avro has, one column NOT NULL and a nested ROW.
func avroTable() Table {
	tb := allTypes(nil)
	tb.Columns = append(tb.Columns[:7:7], tb.Columns[8]) // no INTERVAL
	tb.Columns[0].Type.NotNull = true
	return tb
}

func avroRow() row.Row {
	r := allTypesRow(row.Insert)
	r.V = append(r.V[:7:7], r.V[8])
	return r
}

// The encoding is Avro as github.com/hamba/avro/v2 reads it with the
// schema the codec derives (Flink's).
func TestAvroEncodingIsWhatAnAvroLibraryReads(t *testing.T) {
	tb := avroTable()
	c, err := newAvroCodec(tb, tb.Columns)
	if err != nil {
		t.Fatal(err)
	}
	schema, err := avro.Parse(c.schema())
	if err != nil {
		t.Fatalf("schema %s: %v", c.schema(), err)
	}
	var got map[string]any
	if err := avro.Unmarshal(schema, c.appendRow(nil, avroRow()), &got); err != nil {
		t.Fatal(err)
	}
	dec, _ := got["price"].(*big.Rat)
	p, _ := got["p"].(map[string]any)
	p, _ = p["record_p"].(map[string]any)
	at, _ := p["at"].(time.Time)
	if got["i"] != -7 || got["b"] != int64(1<<40) || got["ok"] != true || got["d"] != 0.1 || dec == nil || dec.FloatString(2) != "-0.05" ||
		got["s"] != "a\"b\\<\n\x01é" || at.UnixMilli() != 1704067200000 || got["n"] != nil {
		t.Fatalf("decoded %#v (schema %s)", got, c.schema())
	}
}

func TestAvroDecodesWhatItEncodesIntoTheRequestedColumns(t *testing.T) {
	tb := avroTable()
	c, _ := newAvroCodec(tb, tb.Columns)
	in := avroRow()
	for _, u := range []int64{0, 127, 128, -128, -129, 1 << 40, -(1 << 62)} {
		in.V[4] = row.Decimal(u)
		v := make([]row.Value, len(in.V))
		if err := c.fill(c.appendRow(nil, in), v); err != nil {
			t.Fatal(err)
		}
		if !row.EqualValues(row.Row{V: v}, in) {
			t.Fatalf("got %v, want %v", v, in.V)
		}
		if want := new(big.Int).SetInt64(u).Bytes(); u > 0 && len(decimalBytes(u)) < len(want) {
			t.Fatalf("%d: %x shorter than its magnitude", u, decimalBytes(u))
		}
	}
	// A nested record whose fields are all NULL is written as null and
	// read back as NULLs; only the requested columns are set.
	in.V[6] = row.Null()
	c.out = []int{-1, -1, -1, -1, -1, 0, 1, -1}
	v := []row.Value{row.Int(9), row.Int(9)}
	data := c.appendRow(nil, in)
	if err := c.fill(data, v); err != nil {
		t.Fatal(err)
	}
	if v[0] != in.V[5] || !v[1].IsNull() {
		t.Fatalf("got %v", v)
	}
	if err := c.fill(data[:len(data)-1], v); err == nil {
		t.Fatal("truncated input decoded")
	}
	if err := c.fill(append(data, 0), v); err == nil {
		t.Fatal("trailing bytes decoded")
	}
}

func TestKafkaSourceDecodesAvroValuesIntoTheRequestedColumns(t *testing.T) {
	tb := kafkaTable(map[string]string{"format": "avro", "key.format": "raw", "key.fields": "id", "value.fields-include": "EXCEPT_KEY"})
	l, err := kafkaLayoutOf(tb, mustCheck(t, tb), false)
	if err != nil {
		t.Fatal(err)
	}
	f, err := newRowFormat(tb, []Column{tb.Columns[1], tb.Columns[2]}, []int{1, 2}, true, false)
	if err != nil {
		t.Fatal(err)
	}
	value, _ := f.Encode(row.Row{V: []row.Value{row.String("k"), row.Decimal(1250), row.String("ann")}})
	d, err := newKafkaDecoder(tb, l, []int{2, 0, 5})
	if err != nil {
		t.Fatal(err)
	}
	var r row.Row
	if err := d.decode(&kgo.Record{Key: []byte("k"), Value: value, Offset: 7}, &r); err != nil {
		t.Fatal(err)
	}
	if want := []row.Value{row.String("ann"), row.String("k"), row.BigInt(7)}; !row.EqualValues(r, row.Row{V: want}) {
		t.Fatalf("got %v, want %v", r.V, want)
	}
}
