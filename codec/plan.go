package codec

import (
	"reflect"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// A plan says how to encode and decode values of one Go type. Plans are
// built once per reflect.Type by a builder and cached in plans; encoding and
// decoding then work on raw pointers (see ops.go) without reflect.Value.
type plan struct {
	typ  reflect.Type
	op   opKind
	size uintptr // typ.Size()
	// min is the fewest bytes an encoded value occupies. It is 0 only for
	// types whose encoding is always empty: zero-size types, and structs
	// whose fields are all skipped or themselves empty. A self-encoding
	// type counts as at least 1 byte (see Marshaler).
	min int

	// inlineCustom reports that a Marshaler with a pointer receiver is
	// reached through struct fields or array elements alone, that is, it
	// would see a pointer into the memory of the value itself, which it
	// may keep. One with a value receiver gets a copy and keeps nothing
	// of the value.
	inlineCustom bool

	elem    *plan   // slice, array and pointer element; map value
	key     *plan   // map key
	n       int     // array length
	fields  []field // struct fields encoded, in declaration order
	skipped []field // struct fields tagged `codec:"-"`, zeroed on decode
}

// field is one struct field of a struct plan.
type field struct {
	name string
	off  uintptr
	pl   *plan        // nil for skipped fields
	typ  reflect.Type // field type
	// def is the encoding of the field's declared default
	// (`codec:"default=VALUE"`), which a reader of an older schema without
	// the field decodes into it; nil for none (the zero value).
	def []byte
}

// opKind selects the encoder and decoder of a plan.
type opKind uint8

const (
	opInvalid opKind = iota
	opBool
	opInt8
	opInt16
	opInt32
	opInt64
	opUint8
	opUint16
	opUint32
	opUint64
	opFloat32
	opFloat64
	opString
	opBytes     // any slice whose element kind is uint8
	opByteArray // any array whose element kind is uint8
	opTime      // time.Time
	opStruct
	opSlice
	opArray
	opMap
	opPtr
	opCustom // Marshaler / Unmarshaler
)

var (
	plans sync.Map // reflect.Type -> *plan, complete plans only

	timeType        = reflect.TypeFor[time.Time]()
	marshalerType   = reflect.TypeFor[Marshaler]()
	unmarshalerType = reflect.TypeFor[Unmarshaler]()
)

// planFor returns the plan for t, building and caching it on first use.
func planFor(t reflect.Type) (*plan, error) {
	if p, ok := plans.Load(t); ok {
		return p.(*plan), nil
	}
	b := builder{root: t, building: map[reflect.Type]*plan{}}
	p, err := b.build(t, rootPath(t), false)
	if err != nil {
		return nil, err
	}
	// Publish only complete plans; a concurrent build of the same types
	// yields equivalent plans, so whichever is stored first wins.
	for typ, q := range b.building {
		plans.LoadOrStore(typ, q)
	}
	if q, ok := plans.Load(t); ok {
		return q.(*plan), nil
	}
	return p, nil
}

// rootPath is how error paths name the type passed to For: its name, or
// if it has none its Go syntax. As in Go selectors, pointers are transparent.
func rootPath(t reflect.Type) string {
	if name := rootName(t); name != "" {
		return name
	}
	return t.String()
}

// rootName returns the name of t, or of the type t points to (through
// any number of unnamed pointer types), or "".
func rootName(t reflect.Type) string {
	for t.Name() == "" && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// builder builds the plan for one root type and everything it reaches.
type builder struct {
	root     reflect.Type
	building map[reflect.Type]*plan // plans created by this builder
}

// build returns the plan for t. path locates t inside the root type for
// error messages; inField reports whether path goes through a struct field.
func (b *builder) build(t reflect.Type, path string, inField bool) (*plan, error) {
	if p, ok := plans.Load(t); ok {
		return p.(*plan), nil
	}
	if p, ok := b.building[t]; ok {
		return p, nil // a recursive type; p is completed further up the stack
	}
	p := &plan{typ: t, size: t.Size()}
	b.building[t] = p
	if err := b.fill(p, path, inField); err != nil {
		return nil, err
	}
	return p, nil
}

func (b *builder) unsupported(t reflect.Type, path string, inField bool, reason string) error {
	e := &UnsupportedTypeError{Root: b.root, Type: t, Reason: reason}
	if inField {
		e.Path = path
	}
	return e
}

// fill sets everything in p but typ and size.
func (b *builder) fill(p *plan, path string, inField bool) error {
	t := p.typ
	if t == timeType {
		p.op, p.min = opTime, 1
		return nil
	}
	pt := reflect.PointerTo(t)
	if pt.Implements(unmarshalerType) {
		if !pt.Implements(marshalerType) {
			return b.unsupported(t, path, inField,
				"*"+t.String()+" implements codec.Unmarshaler but "+t.String()+" does not implement codec.Marshaler")
		}
		p.op, p.min, p.inlineCustom = opCustom, 1, !t.Implements(marshalerType)
		return nil
	}
	switch t.Kind() {
	case reflect.Bool:
		p.op = opBool
	case reflect.Int8:
		p.op = opInt8
	case reflect.Int16:
		p.op = opInt16
	case reflect.Int32:
		p.op = opInt32
	case reflect.Int64:
		p.op = opInt64
	case reflect.Int:
		p.op = opInt64
		if t.Size() == 4 {
			p.op = opInt32
		}
	case reflect.Uint8:
		p.op = opUint8
	case reflect.Uint16:
		p.op = opUint16
	case reflect.Uint32:
		p.op = opUint32
	case reflect.Uint64:
		p.op = opUint64
	case reflect.Uint, reflect.Uintptr:
		p.op = opUint64
		if t.Size() == 4 {
			p.op = opUint32
		}
	case reflect.Float32:
		p.op = opFloat32
	case reflect.Float64:
		p.op = opFloat64
	case reflect.String:
		p.op = opString
	case reflect.Slice:
		return b.fillSlice(p, path, inField)
	case reflect.Array:
		return b.fillArray(p, path, inField)
	case reflect.Map:
		return b.fillMap(p, path, inField)
	case reflect.Pointer:
		elem, err := b.build(t.Elem(), path, inField)
		if err != nil {
			return err
		}
		p.op, p.elem = opPtr, elem
	case reflect.Struct:
		return b.fillStruct(p, path)
	default: // Chan, Func, Interface, Complex64, Complex128, UnsafePointer
		return b.unsupported(t, path, inField, "")
	}
	p.min = minSize(p.op)
	return nil
}

// minSize is the fewest bytes an encoding of a leaf op occupies.
func minSize(op opKind) int {
	switch op {
	case opFloat32:
		return 4
	case opFloat64:
		return 8
	}
	return 1
}

// isCustom reports whether t encodes itself.
func isCustom(t reflect.Type) bool {
	return reflect.PointerTo(t).Implements(unmarshalerType)
}

func (b *builder) fillSlice(p *plan, path string, inField bool) error {
	t := p.typ
	p.min = 1
	if t.Elem().Kind() == reflect.Uint8 && !isCustom(t.Elem()) {
		p.op = opBytes
		return nil
	}
	elem, err := b.build(t.Elem(), path+"[]", inField)
	if err != nil {
		return err
	}
	p.op, p.elem = opSlice, elem
	return nil
}

func (b *builder) fillArray(p *plan, path string, inField bool) error {
	t := p.typ
	p.n = t.Len()
	if t.Elem().Kind() == reflect.Uint8 && !isCustom(t.Elem()) {
		p.op, p.min = opByteArray, p.n
		return nil
	}
	elem, err := b.build(t.Elem(), path+"[]", inField)
	if err != nil {
		return err
	}
	p.op, p.elem = opArray, elem
	p.min = p.n * elem.min
	p.inlineCustom = p.n > 0 && elem.inlineCustom
	return nil
}

func (b *builder) fillMap(p *plan, path string, inField bool) error {
	t := p.typ
	key, err := b.build(t.Key(), path+"[key]", inField)
	if err != nil {
		return err
	}
	val, err := b.build(t.Elem(), path+"[value]", inField)
	if err != nil {
		return err
	}
	p.op, p.key, p.elem, p.min = opMap, key, val, 1
	return nil
}

// fillStruct collects the exported fields of a struct. An embedded struct
// whose type is unexported counts as exported, as with encoding/json; its
// own fields must still be exported. Blank (_) fields are ignored; fields
// tagged `codec:"-"` are skipped when encoding and zeroed when decoding.
// A field tagged `codec:"default=VALUE"` keeps VALUE (see encodeDefault)
// for readers of schemas without it.
func (b *builder) fillStruct(p *plan, path string) error {
	t := p.typ
	p.op = opStruct
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Name == "_" {
			continue
		}
		fpath := path + "." + f.Name
		tag := f.Tag.Get("codec")
		if tag == "-" {
			p.skipped = append(p.skipped, field{name: f.Name, off: f.Offset, typ: f.Type})
			continue
		}
		if !f.IsExported() && !(f.Anonymous && f.Type.Kind() == reflect.Struct) {
			return &UnsupportedTypeError{Root: b.root, Type: f.Type, Path: fpath, Unexported: true}
		}
		fp, err := b.build(f.Type, fpath, true)
		if err != nil {
			return err
		}
		var def []byte
		if v, ok := strings.CutPrefix(tag, "default="); ok {
			if def, err = encodeDefault(fp, v); err != nil {
				return &UnsupportedTypeError{Root: b.root, Type: f.Type, Path: fpath, Reason: err.Error()}
			}
		}
		p.fields = append(p.fields, field{name: f.Name, off: f.Offset, pl: fp, typ: f.Type, def: def})
		p.min += fp.min
		p.inlineCustom = p.inlineCustom || fp.inlineCustom
	}
	return nil
}

// sliceHeader is the memory layout of a Go slice.
type sliceHeader struct {
	data unsafe.Pointer
	len  int
	cap  int
}

// noescape hides p from escape analysis, so that taking the address of a
// value passed to Append does not move it to the heap. It is safe only when
// nothing retains p, or a pointer derived from it, after the call that
// receives it returns; see valueCodec.
//
// Between the conversion to uintptr and back it must call nothing: p
// usually points into the goroutine's stack, and a call can grow the
// stack, which moves it and adjusts the pointers in it but not the
// uintptr, so the result would point into the freed old stack. The race
// detector's builds instrument pointer conversions with calls (checkptr)
// and memory accesses (race), hence the two directives.
//
//go:nocheckptr
//go:norace
func noescape(p unsafe.Pointer) unsafe.Pointer {
	x := uintptr(p)
	return *(*unsafe.Pointer)(unsafe.Pointer(&x))
}
