package codec

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// A Schema describes the binary encoding of a type whose codec For built:
// its kind, and for a struct the names and schemas of its encoded fields
// in order, for containers their elements'. It holds no Go type names, so
// renaming a type or moving it to another package keeps its schema.
//
// A program that stores encoded values for a later version of itself (as
// weir does with state in checkpoints) records the writer's schema next to
// them; the reader then decodes them with the codec its Evolvable codec's
// Reader returns for that schema. The zero Schema means "unknown": a
// Reader given it assumes the values were written with its own schema.
//
// Schemas are immutable and safe for concurrent use.
type Schema struct {
	enc  string // the binary form (Append); "" for the zero Schema
	root *snode
}

// Evolvable is implemented by the codecs For returns (and the built-in
// ones): codecs that describe their encoding and read the encodings of
// earlier versions of their type. A codec a user writes need not
// implement it; values it encodes are then read back as they are.
type Evolvable[T any] interface {
	Codec[T]
	// Schema returns the schema of the codec's encoding.
	Schema() Schema
	// Reader returns a codec for T that decodes values encoded under the
	// writer schema w, and encodes as the codec itself does. When w
	// equals Schema(), or is the zero Schema, or differs only by widened
	// integers, that is the codec itself, at no cost; otherwise Reader
	// builds a converting decoder once:
	//
	//   - struct fields are matched by name, so reordered fields decode
	//     in place; a field the writer had and T lacks is skipped; a
	//     field of T the writer lacked is set to its zero value, or to
	//     the default its tag declares (`codec:"default=VALUE"`, see
	//     For);
	//   - integers widen within their signedness (int8 to int16, int32,
	//     int64; uint8 to uint16, uint32, uint64) and float32 widens to
	//     float64;
	//   - the rules apply inside slices, arrays, maps and pointers, at
	//     any depth;
	//   - a self-encoding type (Marshaler) reads what it reads.
	//
	// Any other change, such as a field changed from string to int, an
	// integer narrowed, a slice made a map, or an array's length changed,
	// makes Reader return a *SchemaError, which wraps ErrIncompatible.
	// So does a removed field of a self-encoding type, which cannot be
	// skipped without its codec.
	Reader(w Schema) (Codec[T], error)
}

// ErrIncompatible is wrapped by the errors of Evolvable.Reader for a
// writer schema it cannot convert from.
var ErrIncompatible = errors.New("codec: incompatible schema")

// SchemaError says what changed incompatibly between the writer's schema
// and the reader's type.
type SchemaError struct {
	// Path locates the change inside the reader's type in Go selector
	// syntax, starting with the type's name: "Stats.Count",
	// "Order.Legs[].Price", "Index[key]". It is the type's name (or Go
	// syntax) alone when the type itself changed.
	Path string
	// Was describes the writer's encoding there ("string", "struct{…}"),
	// Now the reader's Go type ("int64").
	Was, Now string
	// Reason, when set, replaces the default explanation.
	Reason string

	field bool // Path goes into the type: a field, element, key or value
}

func (e *SchemaError) Error() string {
	var b strings.Builder
	b.WriteString("codec: ")
	if e.field {
		b.WriteString("field ")
	}
	b.WriteString(e.Path)
	if e.Reason != "" {
		b.WriteString(" ")
		b.WriteString(e.Reason)
		return b.String()
	}
	b.WriteString(" changed from ")
	b.WriteString(e.Was)
	b.WriteString(" to ")
	b.WriteString(e.Now)
	b.WriteString(", which is not a compatible change (compatible: fields added, removed or reordered, integers and floats widened)")
	return b.String()
}

// Unwrap returns ErrIncompatible.
func (e *SchemaError) Unwrap() error { return ErrIncompatible }

// skind is the kind of a schema node. The values are stored in
// checkpoints: never renumber them.
type skind uint8

const (
	sBool skind = 1 + iota
	sInt8
	sInt16
	sInt32
	sInt64
	sUint8
	sUint16
	sUint32
	sUint64
	sFloat32
	sFloat64
	sString
	sBytes
	sByteArray
	sTime
	sStruct
	sSlice
	sArray
	sMap
	sPtr
	sCustom
	sRef // a reference to an earlier composite node: recursive and repeated types
	sEnd // one past the last kind
)

// schemaVersion starts every encoded Schema.
const schemaVersion = 1

var kindOfOp = [...]skind{
	opBool: sBool, opInt8: sInt8, opInt16: sInt16, opInt32: sInt32, opInt64: sInt64,
	opUint8: sUint8, opUint16: sUint16, opUint32: sUint32, opUint64: sUint64,
	opFloat32: sFloat32, opFloat64: sFloat64, opString: sString, opBytes: sBytes,
	opByteArray: sByteArray, opTime: sTime, opStruct: sStruct, opSlice: sSlice,
	opArray: sArray, opMap: sMap, opPtr: sPtr, opCustom: sCustom,
}

var kindNames = [...]string{
	sBool: "bool", sInt8: "int8", sInt16: "int16", sInt32: "int32", sInt64: "int64",
	sUint8: "uint8", sUint16: "uint16", sUint32: "uint32", sUint64: "uint64",
	sFloat32: "float32", sFloat64: "float64", sString: "string", sBytes: "[]byte",
	sTime: "time.Time", sCustom: "a self-encoding type",
}

// snode is one node of a schema: a graph, cyclic for recursive types.
type snode struct {
	kind   skind
	n      int    // array length
	elem   *snode // slice, array and pointer element; map value
	key    *snode // map key
	fields []sfield
	min    int // fewest bytes an encoding occupies, as plan.min
}

type sfield struct {
	name string
	typ  *snode
}

func (k skind) composite() bool { return k >= sStruct && k <= sPtr }

var schemas sync.Map // reflect.Type -> Schema

// schemaOf returns the schema of the plan pl, cached per type.
func schemaOf(pl *plan) Schema {
	if s, ok := schemas.Load(pl.typ); ok {
		return s.(Schema)
	}
	root := nodeOf(pl, map[*plan]*snode{})
	s := Schema{enc: string(encodeSchema(nil, root)), root: root}
	schemas.Store(pl.typ, s)
	return s
}

// nodeOf returns the schema node of pl; memo holds the nodes made so far,
// which ends recursion.
func nodeOf(pl *plan, memo map[*plan]*snode) *snode {
	if n, ok := memo[pl]; ok {
		return n
	}
	n := &snode{kind: kindOfOp[pl.op], n: pl.n, min: pl.min}
	memo[pl] = n
	if pl.elem != nil {
		n.elem = nodeOf(pl.elem, memo)
	}
	if pl.key != nil {
		n.key = nodeOf(pl.key, memo)
	}
	for _, f := range pl.fields {
		n.fields = append(n.fields, sfield{name: f.name, typ: nodeOf(f.pl, memo)})
	}
	return n
}

// encodeSchema appends the binary form of the schema rooted at root: a
// version byte, then the nodes in preorder. A composite node seen before
// is written as sRef and its index among the composite nodes.
func encodeSchema(dst []byte, root *snode) []byte {
	ids := map[*snode]int{}
	var enc func(n *snode)
	enc = func(n *snode) {
		if id, ok := ids[n]; ok {
			dst = append(dst, byte(sRef))
			dst = appendUvarint(dst, uint64(id))
			return
		}
		dst = append(dst, byte(n.kind))
		if n.kind.composite() {
			ids[n] = len(ids)
		}
		switch n.kind {
		case sByteArray:
			dst = appendUvarint(dst, uint64(n.n))
		case sArray:
			dst = appendUvarint(dst, uint64(n.n))
			enc(n.elem)
		case sSlice, sPtr:
			enc(n.elem)
		case sMap:
			enc(n.key)
			enc(n.elem)
		case sStruct:
			dst = appendUvarint(dst, uint64(len(n.fields)))
			for _, f := range n.fields {
				dst = appendString(dst, f.name)
				enc(f.typ)
			}
		}
	}
	dst = append(dst, schemaVersion)
	enc(root)
	return dst
}

// ParseSchema reads a schema that Schema.Append wrote, all of src. An
// empty src is the zero Schema. Errors wrap ErrCorrupt.
func ParseSchema(src []byte) (Schema, error) {
	if len(src) == 0 {
		return Schema{}, nil
	}
	if src[0] != schemaVersion {
		return Schema{}, corrupt("schema", "unknown version "+strconv.Itoa(int(src[0])))
	}
	p := schemaParser{src: src, off: 1}
	root, err := p.node(0)
	if err != nil {
		return Schema{}, err
	}
	if p.off != len(src) {
		return Schema{}, corrupt("schema", "trailing bytes")
	}
	// A value of a type that contains itself other than through a slice,
	// map or pointer would be infinite: no Go type does.
	inline := map[*snode]uint8{}
	for _, n := range p.nodes {
		if !finite(n, inline) {
			return Schema{}, corrupt("schema", "a type contains itself other than through a slice, map or pointer")
		}
	}
	computeMin(root, map[*snode]uint8{})
	return Schema{enc: string(src), root: root}, nil
}

// finite reports whether no cycle of struct fields and array elements
// reaches n. state marks nodes being checked (1) and checked (2).
func finite(n *snode, state map[*snode]uint8) bool {
	switch state[n] {
	case 1:
		return false
	case 2:
		return true
	}
	state[n] = 1
	ok := true
	switch n.kind {
	case sStruct:
		for _, f := range n.fields {
			ok = ok && finite(f.typ, state)
		}
	case sArray:
		ok = n.n == 0 || finite(n.elem, state)
	}
	state[n] = 2
	return ok
}

type schemaParser struct {
	src   []byte
	off   int
	nodes []*snode // composite nodes by index
}

// maxSchemaDepth bounds the nesting of a parsed schema.
const maxSchemaDepth = 1000

func (p *schemaParser) uvarint() (int, error) {
	x, n := readUvarint(p.src[p.off:])
	if n <= 0 {
		return 0, varintError("schema", n)
	}
	if x > 1<<31 {
		return 0, corrupt("schema", "count out of range")
	}
	p.off += n
	return int(x), nil
}

func (p *schemaParser) node(depth int) (*snode, error) {
	if depth > maxSchemaDepth {
		return nil, corrupt("schema", "nested too deeply")
	}
	if p.off >= len(p.src) {
		return nil, corrupt("schema", "truncated input")
	}
	k := skind(p.src[p.off])
	p.off++
	if k == sRef {
		id, err := p.uvarint()
		if err != nil {
			return nil, err
		}
		if id >= len(p.nodes) {
			return nil, corrupt("schema", "reference to an unknown node")
		}
		return p.nodes[id], nil
	}
	if k == 0 || k >= sEnd {
		return nil, corrupt("schema", "unknown kind "+strconv.Itoa(int(k)))
	}
	n := &snode{kind: k}
	if k.composite() {
		p.nodes = append(p.nodes, n)
	}
	var err error
	switch k {
	case sByteArray:
		n.n, err = p.uvarint()
	case sArray:
		if n.n, err = p.uvarint(); err == nil {
			n.elem, err = p.node(depth + 1)
		}
	case sSlice, sPtr:
		n.elem, err = p.node(depth + 1)
	case sMap:
		if n.key, err = p.node(depth + 1); err == nil {
			n.elem, err = p.node(depth + 1)
		}
	case sStruct:
		var c int
		if c, err = p.uvarint(); err != nil {
			return nil, err
		}
		for range c {
			l, m, err := readLen(p.src[p.off:], "schema field name")
			if err != nil {
				return nil, err
			}
			name := string(p.src[p.off+m : p.off+m+l])
			p.off += m + l
			t, err := p.node(depth + 1)
			if err != nil {
				return nil, err
			}
			n.fields = append(n.fields, sfield{name: name, typ: t})
		}
	}
	if err != nil {
		return nil, err
	}
	return n, nil
}

// maxMin bounds min on parsed schemas, which may describe arrays larger
// than memory: no input is that long.
const maxMin = 1 << 48

// computeMin sets min on a parsed schema as the builder sets plan.min, so
// that min is 0 only for encodings that are always empty. Only slices,
// maps and pointers lead back to a node being computed (see finite), and
// they set their own min first. state marks nodes being computed (1) and
// computed (2).
func computeMin(n *snode, state map[*snode]uint8) int {
	if state[n] != 0 {
		return n.min
	}
	state[n] = 1
	defer func() { state[n] = 2 }()
	switch n.kind {
	case sFloat32:
		n.min = 4
	case sFloat64:
		n.min = 8
	case sByteArray:
		n.min = n.n
	case sArray:
		if m := computeMin(n.elem, state); m > 0 {
			n.min = min(n.n, maxMin/m) * m
		}
	case sStruct:
		for _, f := range n.fields {
			n.min = min(n.min+computeMin(f.typ, state), maxMin)
		}
	case sSlice, sPtr:
		n.min = 1
		computeMin(n.elem, state)
	case sMap:
		n.min = 1
		computeMin(n.key, state)
		computeMin(n.elem, state)
	default:
		n.min = 1
	}
	return n.min
}

// IsZero reports whether s is the zero Schema: unknown.
func (s Schema) IsZero() bool { return s.enc == "" }

// Equal reports whether s and o describe the same encoding.
func (s Schema) Equal(o Schema) bool { return s.enc == o.enc }

// Append appends the binary form of s (nothing for the zero Schema), which
// ParseSchema reads back.
func (s Schema) Append(dst []byte) []byte { return append(dst, s.enc...) }

// String describes s in Go-like syntax, for example
// "struct{Count int64; Names []string}".
func (s Schema) String() string {
	if s.root == nil {
		return "unknown"
	}
	return describe(s.root, -1)
}

// MapSchema returns the schema of a map encoded as the codec package
// encodes maps (an entry count, then keys and values), with keys and values
// of the given schemas. Codecs that encode maps their own way, entries
// unsorted for example, describe themselves with it. A zero key or value
// schema (a codec without one) stands for a type that encodes itself: its
// codec reads what it reads.
func MapSchema(key, value Schema) Schema {
	opaque := func(s Schema) *snode {
		if s.root == nil {
			return &snode{kind: sCustom, min: 1}
		}
		return s.root
	}
	n := &snode{kind: sMap, key: opaque(key), elem: opaque(value), min: 1}
	return Schema{enc: string(encodeSchema(nil, n)), root: n}
}

// MapParts returns the key and value schemas of a map schema, and false
// for any other schema.
func (s Schema) MapParts() (key, value Schema, ok bool) {
	if s.root == nil || s.root.kind != sMap {
		return Schema{}, Schema{}, false
	}
	k, v := s.root.key, s.root.elem
	return Schema{enc: string(encodeSchema(nil, k)), root: k}, Schema{enc: string(encodeSchema(nil, v)), root: v}, true
}

// describe names the encoding of n for messages; depth limits how many
// levels of nesting are spelled out (negative: three), and at most
// describeNodes nodes are, so that recursive and repetitive schemas end.
func describe(n *snode, depth int) string {
	if depth < 0 {
		depth = 3
	}
	d := describer{left: describeNodes}
	d.node(n, depth)
	return d.b.String()
}

const describeNodes = 64

type describer struct {
	b    strings.Builder
	left int
}

func (d *describer) node(n *snode, depth int) {
	if n.kind >= sStruct && n.kind <= sPtr && (depth == 0 || d.left <= 0) {
		if n.kind == sStruct {
			d.b.WriteString("struct{…}")
		} else {
			d.b.WriteString("…")
		}
		return
	}
	d.left--
	switch n.kind {
	case sByteArray:
		d.b.WriteString("[" + strconv.Itoa(n.n) + "]byte")
	case sArray:
		d.b.WriteString("[" + strconv.Itoa(n.n) + "]")
		d.node(n.elem, depth-1)
	case sSlice:
		d.b.WriteString("[]")
		d.node(n.elem, depth-1)
	case sPtr:
		d.b.WriteString("*")
		d.node(n.elem, depth-1)
	case sMap:
		d.b.WriteString("map[")
		d.node(n.key, depth-1)
		d.b.WriteString("]")
		d.node(n.elem, depth-1)
	case sStruct:
		d.b.WriteString("struct{")
		for i, f := range n.fields {
			if i > 0 {
				d.b.WriteString("; ")
			}
			if d.left <= 0 {
				d.b.WriteString("…")
				break
			}
			d.b.WriteString(f.name)
			d.b.WriteString(" ")
			d.node(f.typ, depth-1)
		}
		d.b.WriteString("}")
	default:
		if int(n.kind) < len(kindNames) && kindNames[n.kind] != "" {
			d.b.WriteString(kindNames[n.kind])
		} else {
			d.b.WriteString("kind " + strconv.Itoa(int(n.kind)))
		}
	}
}

// schemaFor returns the schema of T's plan, or the zero Schema if T has
// no plan (it then has no codec from For either).
func schemaFor[T any]() Schema {
	pl, err := planFor(reflect.TypeFor[T]())
	if err != nil {
		return Schema{}
	}
	return schemaOf(pl)
}
