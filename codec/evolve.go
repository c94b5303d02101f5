package codec

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"
	"unsafe"
)

// Schema evolution: decoding values written under an older schema of the
// reader's type (Evolvable.Reader). A conv mirrors the reader's plan where
// the writer's schema differs from it; where they agree it hands over to
// the plain decoder (convSame), so unchanged parts cost nothing extra.

type convKind uint8

const (
	convSame   convKind = iota // decode with the reader's plan
	convFloat                  // float32 written, float64 read
	convStruct                 // fields matched by name
	convSlice
	convArray
	convMap
	convPtr
)

type conv struct {
	kind convKind
	r    *plan  // the reader's plan
	w    *snode // the writer's schema
	elem *conv  // slice, array and pointer element; map value
	key  *conv  // map key
	// Struct: the writer's fields in order, each decoded into a reader
	// field or skipped; the reader's fields the writer lacked.
	fields  []convField
	missing []field
}

type convField struct {
	off  uintptr
	c    *conv  // nil: a field the reader dropped, skipped
	skip *snode // the dropped field's schema
	name string
}

type convPair struct {
	w *snode
	r *plan
}

// convBuilder builds the conv of one writer schema and reader type.
type convBuilder struct {
	memo  map[convPair]*conv
	rmemo map[*plan]*snode // the reader's schema nodes
	root  string           // the path of the reader's type
}

func newConv(w *snode, r *plan, root string) (*conv, error) {
	b := convBuilder{memo: map[convPair]*conv{}, rmemo: map[*plan]*snode{}, root: root}
	return b.build(w, r, root)
}

func (b *convBuilder) build(w *snode, r *plan, path string) (*conv, error) {
	key := convPair{w, r}
	if c, ok := b.memo[key]; ok {
		return c, nil // recursive: completed further up the stack
	}
	c := &conv{r: r, w: w}
	b.memo[key] = c
	if sameNode(w, nodeOf(r, b.rmemo), map[[2]*snode]bool{}) {
		return c, nil
	}
	rk := kindOfOp[r.op]
	incompatible := func() error {
		return &SchemaError{Path: path, Was: describe(w, -1), Now: r.typ.String(), field: path != b.root}
	}
	switch {
	case rk == sCustom && w.kind == sCustom:
		return c, nil // a self-encoding type reads its own encodings
	case widens(w.kind, rk):
		if w.kind == sFloat32 {
			c.kind = convFloat
		}
		return c, nil // integers: the same varint, decoded wider
	case rk != w.kind:
		return nil, incompatible()
	}
	var err error
	switch rk {
	case sStruct:
		c.kind = convStruct
		err = b.fields(c, path)
	case sSlice:
		c.kind = convSlice
		c.elem, err = b.build(w.elem, r.elem, path+"[]")
	case sArray:
		if w.n != r.n {
			return nil, incompatible()
		}
		c.kind = convArray
		c.elem, err = b.build(w.elem, r.elem, path+"[]")
	case sPtr:
		c.kind = convPtr
		c.elem, err = b.build(w.elem, r.elem, path)
	case sMap:
		c.kind = convMap
		if c.key, err = b.build(w.key, r.key, path+"[key]"); err == nil {
			c.elem, err = b.build(w.elem, r.elem, path+"[value]")
		}
	default: // a leaf of the same kind but not the same node: a byte array's length
		return nil, incompatible()
	}
	if err != nil {
		return nil, err
	}
	if c.kind == convStruct && structSame(c) ||
		c.kind != convStruct && (c.elem == nil || c.elem.kind == convSame) && (c.key == nil || c.key.kind == convSame) {
		c.kind = convSame // only integers widened inside
	}
	return c, nil
}

// structSame reports whether a struct conversion decodes as the reader's
// plan does: the same fields in the same order, each read as it is.
func structSame(c *conv) bool {
	if len(c.missing) > 0 || len(c.fields) != len(c.r.fields) {
		return false
	}
	for i, f := range c.fields {
		if f.c == nil || f.c.kind != convSame || f.off != c.r.fields[i].off {
			return false
		}
	}
	return true
}

// fields matches the writer's struct fields to the reader's by name.
func (b *convBuilder) fields(c *conv, path string) error {
	byName := map[string]int{}
	for i, f := range c.r.fields {
		byName[f.name] = i
	}
	seen := make([]bool, len(c.r.fields))
	for _, wf := range c.w.fields {
		i, ok := byName[wf.name]
		if !ok {
			if !skippable(wf.typ, map[*snode]bool{}) {
				return &SchemaError{Path: path + "." + wf.name, field: true, Reason: "was removed, but its value encodes itself (codec.Marshaler) and cannot be skipped without its codec; keep the field until no stored value holds it"}
			}
			c.fields = append(c.fields, convField{skip: wf.typ, name: wf.name})
			continue
		}
		rf := c.r.fields[i]
		fc, err := b.build(wf.typ, rf.pl, path+"."+rf.name)
		if err != nil {
			return err
		}
		seen[i] = true
		c.fields = append(c.fields, convField{off: rf.off, c: fc, name: rf.name})
	}
	for i, f := range c.r.fields {
		if !seen[i] {
			c.missing = append(c.missing, f)
		}
	}
	return nil
}

// widens reports whether a value written as kind w reads as kind r by
// widening: a wider integer of the same signedness, or float32 to float64.
func widens(w, r skind) bool {
	switch {
	case w >= sInt8 && w <= sInt64:
		return r > w && r <= sInt64
	case w >= sUint8 && w <= sUint64:
		return r > w && r <= sUint64
	}
	return w == sFloat32 && r == sFloat64
}

// sameNode reports whether the schema graphs at a and b are equal. Pairs
// being compared count as equal, which ends recursion.
func sameNode(a, b *snode, busy map[[2]*snode]bool) bool {
	if a == b {
		return true
	}
	pair := [2]*snode{a, b}
	if busy[pair] {
		return true
	}
	busy[pair] = true
	if a.kind != b.kind || a.n != b.n || len(a.fields) != len(b.fields) {
		return false
	}
	for i := range a.fields {
		if a.fields[i].name != b.fields[i].name || !sameNode(a.fields[i].typ, b.fields[i].typ, busy) {
			return false
		}
	}
	return (a.elem == nil) == (b.elem == nil) && (a.elem == nil || sameNode(a.elem, b.elem, busy)) &&
		(a.key == nil) == (b.key == nil) && (a.key == nil || sameNode(a.key, b.key, busy))
}

// skippable reports whether values of n can be skipped without their Go
// type: whether no self-encoding type is reachable from it.
func skippable(n *snode, seen map[*snode]bool) bool {
	if seen[n] {
		return true
	}
	seen[n] = true
	if n.kind == sCustom {
		return false
	}
	for _, f := range n.fields {
		if !skippable(f.typ, seen) {
			return false
		}
	}
	return (n.elem == nil || skippable(n.elem, seen)) && (n.key == nil || skippable(n.key, seen))
}

// decodeConv is decodeOp for a value written under c.w, read into c.r.
func decodeConv(src []byte, c *conv, p unsafe.Pointer) (int, error) {
	switch c.kind {
	case convSame:
		return decodeOp(src, c.r, p)
	case convFloat:
		var bits uint32
		n, err := decFloat32(src, &bits)
		if err != nil {
			return 0, retype(err, c.r.typ)
		}
		*(*float64)(p) = float64(math.Float32frombits(bits))
		return n, nil
	case convStruct:
		return decodeConvStruct(src, c, p)
	case convSlice:
		count, n, err := readCount(src, c.r, c.w.elem.min)
		if err != nil {
			return 0, err
		}
		*(*sliceHeader)(p) = sliceHeader{}
		if count == 0 {
			return n, nil
		}
		s := reflect.NewAt(c.r.typ, p).Elem()
		s.Grow(count)
		s.SetLen(count)
		m, err := decodeConvElems(src[n:], c.elem, s.UnsafePointer(), count)
		return n + m, err
	case convArray:
		return decodeConvElems(src, c.elem, p, c.r.n)
	case convPtr:
		if len(src) == 0 || src[0] > 1 {
			return 0, corrupt(c.r.typ.String(), "bad presence byte")
		}
		if src[0] == 0 {
			*(*unsafe.Pointer)(p) = nil
			return 1, nil
		}
		q := reflect.New(c.r.elem.typ).UnsafePointer()
		n, err := decodeConv(src[1:], c.elem, q)
		if err != nil {
			return 0, err
		}
		*(*unsafe.Pointer)(p) = q
		return 1 + n, nil
	case convMap:
		return decodeConvMap(src, c, p)
	}
	panic("codec: internal error: bad conversion " + strconv.Itoa(int(c.kind)))
}

func decodeConvStruct(src []byte, c *conv, p unsafe.Pointer) (int, error) {
	off := 0
	for i := range c.fields {
		f := &c.fields[i]
		var n int
		var err error
		if f.c == nil {
			n, err = skipValue(src[off:], f.skip)
		} else {
			n, err = decodeConv(src[off:], f.c, unsafe.Add(p, f.off))
		}
		if err != nil {
			return 0, withPath(err, f.name)
		}
		off += n
	}
	for i := range c.missing {
		f := &c.missing[i]
		q := unsafe.Add(p, f.off)
		if f.def != nil {
			if _, err := decodeOp(f.def, f.pl, q); err != nil {
				panic("codec: internal error: bad default of " + f.name)
			}
			continue
		}
		reflect.NewAt(f.typ, q).Elem().SetZero()
	}
	for i := range c.r.skipped {
		f := &c.r.skipped[i]
		reflect.NewAt(f.typ, unsafe.Add(p, f.off)).Elem().SetZero()
	}
	return off, nil
}

func decodeConvElems(src []byte, elem *conv, p unsafe.Pointer, n int) (int, error) {
	off := 0
	for i := range n {
		m, err := decodeConv(src[off:], elem, unsafe.Add(p, uintptr(i)*elem.r.size))
		if err != nil {
			return 0, withPath(err, "["+strconv.Itoa(i)+"]")
		}
		off += m
	}
	return off, nil
}

// decodeConvMap decodes a map entry by entry. The entries' order is not
// checked: converted keys need not sort as their encodings did. Keys
// that become equal (a dropped field told them apart) are an error.
func decodeConvMap(src []byte, c *conv, p unsafe.Pointer) (int, error) {
	count, off, err := readCount(src, c.r, c.w.key.min+c.w.elem.min)
	if err != nil {
		return 0, err
	}
	if count == 0 {
		*(*unsafe.Pointer)(p) = nil
		return off, nil
	}
	m := reflect.MakeMapWithSize(c.r.typ, min(count, len(src)))
	kp, vp := reflect.New(c.r.key.typ), reflect.New(c.r.elem.typ)
	for i := range count {
		kn, err := decodeConv(src[off:], c.key, kp.UnsafePointer())
		if err != nil {
			return 0, withPath(err, "[key "+strconv.Itoa(i)+"]")
		}
		off += kn
		vn, err := decodeConv(src[off:], c.elem, vp.UnsafePointer())
		if err != nil {
			return 0, withPath(err, "[value "+strconv.Itoa(i)+"]")
		}
		off += vn
		before := m.Len()
		m.SetMapIndex(kp.Elem(), vp.Elem())
		if m.Len() == before {
			return 0, corrupt(c.r.typ.String(), "two keys are equal after conversion")
		}
	}
	*(*unsafe.Pointer)(p) = m.UnsafePointer()
	return off, nil
}

// skipValue returns the length of the encoding of a value of schema n at
// the start of src, checking it as a decoder would. n is skippable.
func skipValue(src []byte, n *snode) (int, error) {
	if n.min == 0 {
		return 0, nil // an encoding that is always empty
	}
	what := describe(n, 1)
	switch n.kind {
	case sBool:
		var b bool
		return decBool(src, &b)
	case sInt8, sInt16, sInt32, sInt64, sUint8, sUint16, sUint32, sUint64:
		_, m := readUvarint(src)
		if m <= 0 {
			return 0, varintError(what, m)
		}
		return m, nil
	case sFloat32, sFloat64:
		if len(src) < n.min {
			return 0, corrupt(what, "truncated input")
		}
		return n.min, nil
	case sString, sBytes:
		l, m, err := readLen(src, what)
		return l + m, err
	case sByteArray:
		if len(src) < n.n {
			return 0, corrupt(what, "truncated input")
		}
		return n.n, nil
	case sTime:
		var t time.Time
		return decTime(src, &t)
	case sStruct:
		off := 0
		for _, f := range n.fields {
			m, err := skipValue(src[off:], f.typ)
			if err != nil {
				return 0, withPath(err, f.name)
			}
			off += m
		}
		return off, nil
	case sArray:
		return skipElems(src, n.elem, n.n, 0)
	case sSlice, sMap:
		c, m := readUvarint(src)
		if m <= 0 {
			return 0, varintError(what, m)
		}
		per := n.elem.min
		if n.kind == sMap {
			per += n.key.min
		}
		if per > 0 && c > uint64(len(src)-m)/uint64(per) || per == 0 && c > maxEmptyElems {
			return 0, corrupt(what, "length exceeds input")
		}
		if n.kind == sSlice {
			return skipElems(src, n.elem, int(c), m)
		}
		off := m
		for range c {
			k, err := skipValue(src[off:], n.key)
			if err != nil {
				return 0, err
			}
			v, err := skipValue(src[off+k:], n.elem)
			if err != nil {
				return 0, err
			}
			off += k + v
		}
		return off, nil
	case sPtr:
		if len(src) == 0 || src[0] > 1 {
			return 0, corrupt(what, "bad presence byte")
		}
		if src[0] == 0 {
			return 1, nil
		}
		m, err := skipValue(src[1:], n.elem)
		return 1 + m, err
	}
	panic("codec: internal error: cannot skip " + what)
}

func skipElems(src []byte, elem *snode, count, off int) (int, error) {
	for range count {
		m, err := skipValue(src[off:], elem)
		if err != nil {
			return 0, err
		}
		off += m
	}
	return off, nil
}

// convCodec is the codec Evolvable.Reader returns for a writer schema that
// needs converting: it decodes through a conv and encodes as enc does.
type convCodec[T any] struct {
	enc  Codec[T]
	c    *conv
	root string // prefix of field paths in decoding errors
}

func (cc *convCodec[T]) Append(dst []byte, v T) []byte { return cc.enc.Append(dst, v) }

func (cc *convCodec[T]) Decode(src []byte, v *T) (int, error) {
	n, err := decodeConv(src, cc.c, unsafe.Pointer(v))
	if err != nil {
		return 0, withPath(err, cc.root)
	}
	return n, nil
}

// readerOf implements Evolvable.Reader for self, a codec of T that
// encodes as T's plan does.
func readerOf[T any](self Codec[T], w Schema) (Codec[T], error) {
	if w.IsZero() {
		return self, nil
	}
	t := reflect.TypeFor[T]()
	pl, err := planFor(t)
	if err != nil {
		return nil, err
	}
	if schemaOf(pl).Equal(w) {
		return self, nil
	}
	c, err := newConv(w.root, pl, rootPath(t))
	if err != nil {
		return nil, err
	}
	if c.kind == convSame {
		return self, nil
	}
	return &convCodec[T]{enc: self, c: c, root: rootName(t)}, nil
}

// encodeDefault parses the default declared for a field of plan fp
// (`codec:"default=VALUE"`) and returns its encoding. Booleans, integers
// (in Go syntax: 42, -1, 0x2a), floats, strings and time.Duration (as
// time.ParseDuration reads it: "1m30s") may have defaults.
func encodeDefault(fp *plan, s string) ([]byte, error) {
	t := fp.typ
	v := reflect.New(t).Elem()
	var err error
	switch k := t.Kind(); {
	case t == reflect.TypeFor[time.Duration]():
		var d time.Duration
		d, err = time.ParseDuration(s)
		v.SetInt(int64(d))
	case k == reflect.Bool:
		var b bool
		b, err = strconv.ParseBool(s)
		v.SetBool(b)
	case k >= reflect.Int && k <= reflect.Int64:
		var i int64
		i, err = strconv.ParseInt(s, 0, t.Bits())
		v.SetInt(i)
	case k >= reflect.Uint && k <= reflect.Uintptr:
		var u uint64
		u, err = strconv.ParseUint(s, 0, t.Bits())
		v.SetUint(u)
	case k == reflect.Float32 || k == reflect.Float64:
		var f float64
		f, err = strconv.ParseFloat(s, t.Bits())
		v.SetFloat(f)
	case k == reflect.String:
		v.SetString(s)
	default:
		return nil, fmt.Errorf("a default (tag codec:\"default=...\") is supported for booleans, numbers, strings and durations only")
	}
	if err != nil {
		return nil, fmt.Errorf("default %q is not a valid %v: %w", s, t, err)
	}
	return appendOp(nil, fp, v.Addr().UnsafePointer()), nil
}
