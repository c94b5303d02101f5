package tables

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// This file is the avro format of rows: bare Avro binary (no container
// header, no schema-registry prefix), with the schema Flink's avro format
// derives from a table (AvroSchemaConverter): a record named "record"
// whose fields are the columns; a ROW column a nested record named
// <parent>_<field>; BOOLEAN boolean, INT int, BIGINT long, DOUBLE double,
// VARCHAR string, DECIMAL(p, s) bytes with the decimal logical type,
// TIMESTAMP(3) long with timestamp-millis; a nullable type a union
// ["null", type]. A nested record whose fields are all NULL is written as
// null (the flattened columns cannot tell the two apart).
//
// The binary encoding is written here rather than through a library's
// reflection, to build rows without intermediate maps; the tests check it
// against github.com/hamba/avro/v2.

// avroNode is a field of the record tree: a leaf column or a nested
// record.
type avroNode struct {
	name     string
	col      int // the leaf's index in the codec's columns, or -1
	typ      types.Type
	children []*avroNode
}

// avroCodec encodes and decodes rows of columns cols.
type avroCodec struct {
	cols []Column
	root *avroNode
	// out[i] is where column i's decoded value goes, -1 for nowhere;
	// nil means to i.
	out []int
	// idx[i] is where column i's value is in an encoded row; nil means i.
	idx []int
}

// newAvroCodec builds the record tree of cols, which must be a table's
// columns in order (a ROW's leaves adjacent).
func newAvroCodec(t Table, cols []Column) (*avroCodec, error) {
	c := &avroCodec{cols: cols, root: &avroNode{name: "record", col: -1}}
	for i, col := range cols {
		switch col.Type.Kind {
		case types.Interval, types.Null, types.Row:
			return nil, t.columnErr(col, "the avro format has no %s type", col.Type.Kind)
		}
		n := c.root
		for _, name := range col.Path[:len(col.Path)-1] {
			var last *avroNode
			if k := len(n.children); k > 0 && n.children[k-1].col < 0 && n.children[k-1].name == name {
				last = n.children[k-1]
			} else {
				last = &avroNode{name: name, col: -1}
				n.children = append(n.children, last)
			}
			n = last
		}
		n.children = append(n.children, &avroNode{name: col.Path[len(col.Path)-1], col: i, typ: col.Type})
	}
	return c, nil
}

// schema returns the Avro schema of the codec's rows, as JSON.
func (c *avroCodec) schema() string {
	b, _ := json.Marshal(c.root.schema("record"))
	return string(b)
}

func (n *avroNode) schema(name string) any {
	if n.col < 0 {
		var fields []any
		for _, ch := range n.children {
			fields = append(fields, map[string]any{"name": ch.name, "type": ch.schema(name + "_" + ch.name)})
		}
		rec := map[string]any{"type": "record", "name": name, "fields": fields}
		if n.name == "record" && name == "record" {
			return rec
		}
		return []any{"null", rec}
	}
	var s any
	switch n.typ.Kind {
	case types.Boolean:
		s = "boolean"
	case types.Int:
		s = "int"
	case types.BigInt:
		s = "long"
	case types.Double:
		s = "double"
	case types.Varchar:
		s = "string"
	case types.Decimal:
		s = map[string]any{"type": "bytes", "logicalType": "decimal", "precision": n.typ.Precision, "scale": n.typ.Scale}
	case types.Timestamp:
		s = map[string]any{"type": "long", "logicalType": "timestamp-millis"}
	}
	if n.typ.NotNull {
		return s
	}
	return []any{"null", s}
}

func (c *avroCodec) at(i int) int {
	if c.idx != nil {
		return c.idx[i]
	}
	return i
}

// appendRow appends r's encoding.
func (c *avroCodec) appendRow(dst []byte, r row.Row) []byte {
	for _, ch := range c.root.children {
		dst = c.appendNode(dst, ch, r)
	}
	return dst
}

func (c *avroCodec) appendNode(dst []byte, n *avroNode, r row.Row) []byte {
	if n.col < 0 {
		if c.allNull(n, r) {
			return append(dst, 0) // the union's null branch
		}
		dst = append(dst, 2) // branch 1, zigzag
		for _, ch := range n.children {
			dst = c.appendNode(dst, ch, r)
		}
		return dst
	}
	v := r.V[c.at(n.col)]
	if !n.typ.NotNull {
		if v.IsNull() {
			return append(dst, 0)
		}
		dst = append(dst, 2)
	}
	switch n.typ.Kind {
	case types.Boolean:
		return append(dst, byte(v.I&1))
	case types.Double:
		return binary.LittleEndian.AppendUint64(dst, uint64(v.I))
	case types.Varchar:
		dst = binary.AppendVarint(dst, int64(len(v.S)))
		return append(dst, v.S...)
	case types.Decimal:
		b := decimalBytes(v.I)
		dst = binary.AppendVarint(dst, int64(len(b)))
		return append(dst, b...)
	}
	return binary.AppendVarint(dst, v.I) // int, long, timestamp-millis
}

func (c *avroCodec) allNull(n *avroNode, r row.Row) bool {
	for _, ch := range n.children {
		if ch.col >= 0 && !r.V[c.at(ch.col)].IsNull() || ch.col < 0 && !c.allNull(ch, r) {
			return false
		}
	}
	return true
}

// decimalBytes is the minimal big-endian two's complement of u, as Java's
// BigInteger.toByteArray.
func decimalBytes(u int64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(u))
	i := 0
	for i < 7 && (b[i] == 0 && b[i+1]&0x80 == 0 || b[i] == 0xff && b[i+1]&0x80 != 0) {
		i++
	}
	return b[i:]
}

var errAvroShort = errors.New("input ends inside the value")

// fill decodes one value and sets the codec's columns in v.
func (c *avroCodec) fill(data []byte, v []row.Value) error {
	d := avroReader{data: data}
	for _, ch := range c.root.children {
		if err := c.readNode(&d, ch, v); err != nil {
			return err
		}
	}
	if d.err != nil {
		return d.err
	}
	if len(d.data) != 0 {
		return fmt.Errorf("%d bytes left after the value", len(d.data))
	}
	return nil
}

func (c *avroCodec) set(v []row.Value, col int, val row.Value) {
	at := col
	if c.out != nil {
		at = c.out[col]
	}
	if at >= 0 {
		v[at] = val
	}
}

func (c *avroCodec) readNode(d *avroReader, n *avroNode, v []row.Value) error {
	if n.col < 0 || !n.typ.NotNull {
		switch d.long() {
		case 0:
			c.setNull(n, v)
			return d.err
		case 1:
		default:
			return fmt.Errorf("field %s: bad union branch", n.name)
		}
	}
	if n.col < 0 {
		for _, ch := range n.children {
			if err := c.readNode(d, ch, v); err != nil {
				return err
			}
		}
		return nil
	}
	var val row.Value
	switch n.typ.Kind {
	case types.Boolean:
		b := d.bytes(1)
		if len(b) == 1 && b[0] > 1 {
			return fmt.Errorf("field %s: bad boolean %d", n.name, b[0])
		}
		val = row.Bool(len(b) == 1 && b[0] == 1)
	case types.Double:
		if b := d.bytes(8); b != nil {
			val = row.Double(math.Float64frombits(binary.LittleEndian.Uint64(b)))
		}
	case types.Varchar:
		val = row.String(string(d.bytes(int(d.long()))))
	case types.Decimal:
		b := d.bytes(int(d.long()))
		if len(b) > 8 {
			return fmt.Errorf("field %s: %w", n.name, errDecimalRange)
		}
		var u int64
		if len(b) > 0 && b[0]&0x80 != 0 {
			u = -1
		}
		for _, x := range b {
			u = u<<8 | int64(x)
		}
		val = row.Decimal(u)
	case types.Int:
		l := d.long()
		if l < math.MinInt32 || l > math.MaxInt32 {
			return fmt.Errorf("field %s: %d is not an int", n.name, l)
		}
		val = row.Int(int32(l))
	default:
		val = row.Value{K: n.typ.Kind, I: d.long()}
	}
	if d.err != nil {
		return d.err
	}
	c.set(v, n.col, val)
	return nil
}

func (c *avroCodec) setNull(n *avroNode, v []row.Value) {
	if n.col >= 0 {
		c.set(v, n.col, row.Null())
		return
	}
	for _, ch := range n.children {
		c.setNull(ch, v)
	}
}

// avroReader reads Avro's primitives; the first error sticks.
type avroReader struct {
	data []byte
	err  error
}

func (d *avroReader) long() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.data)
	if n <= 0 {
		d.err = errAvroShort
		return 0
	}
	d.data = d.data[n:]
	return v
}

func (d *avroReader) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.data) {
		d.err = errAvroShort
		return nil
	}
	b := d.data[:n]
	d.data = d.data[n:]
	return b
}
