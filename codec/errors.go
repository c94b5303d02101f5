package codec

import (
	"reflect"
	"strings"
)

// corruptError is the error Decode returns for malformed input. It wraps
// ErrCorrupt and, when the input was rejected by a Unmarshaler, the error
// that Unmarshaler returned.
type corruptError struct {
	what   string // what was being decoded: "int64", "length of []string", ...
	path   string // field path from the decoded type, e.g. "Trade.Legs[2].Price"
	detail string // what is wrong: "truncated input", ...
	cause  error  // optional underlying error
}

func (e *corruptError) Error() string {
	var b strings.Builder
	b.WriteString("codec: decoding ")
	if e.path != "" {
		b.WriteString(e.path)
		b.WriteString(" (")
		b.WriteString(e.what)
		b.WriteString(")")
	} else {
		b.WriteString(e.what)
	}
	b.WriteString(": ")
	b.WriteString(e.detail)
	if e.cause != nil {
		b.WriteString(": ")
		b.WriteString(e.cause.Error())
	}
	return b.String()
}

// Unwrap returns ErrCorrupt and, if present, the underlying cause.
func (e *corruptError) Unwrap() []error {
	if e.cause != nil {
		return []error{ErrCorrupt, e.cause}
	}
	return []error{ErrCorrupt}
}

// corrupt returns an error wrapping ErrCorrupt saying that decoding what
// failed because of detail.
func corrupt(what, detail string) error {
	return &corruptError{what: what, detail: detail}
}

// Results of readUvarint other than a positive byte count.
const (
	varintTruncated    = 0
	varintOverflow     = -1
	varintNonCanonical = -2
)

// varintError converts a non-positive readUvarint result into an error.
func varintError(what string, code int) error {
	switch code {
	case varintOverflow:
		return corrupt(what, "varint overflows 64 bits")
	case varintNonCanonical:
		return corrupt(what, "over-long varint")
	default:
		return corrupt(what, "truncated input")
	}
}

// withPath prefixes the field path of a decoding error with seg, a field
// name ("Price") or an index ("[3]"). Other errors are returned unchanged.
func withPath(err error, seg string) error {
	e, ok := err.(*corruptError)
	if !ok || seg == "" {
		return err
	}
	switch {
	case e.path == "":
		e.path = seg
	case e.path[0] == '[':
		e.path = seg + e.path
	default:
		e.path = seg + "." + e.path
	}
	return e
}

// UnsupportedTypeError is returned by For when it cannot build a codec for a
// type: the type, or a type reachable from it, has a kind the format does not
// support (chan, func, interface, complex, unsafe.Pointer), or a struct has an
// unexported field.
type UnsupportedTypeError struct {
	// Root is the type passed to For.
	Root reflect.Type
	// Type is the type no codec exists for. For an unexported field it is
	// the field's type.
	Type reflect.Type
	// Path locates Type inside Root in Go selector syntax, starting with
	// Root's name: "Trade.Meta.Tags[]" (a slice or array element),
	// "Trade.Attrs[key]", "Trade.Attrs[value]". It is empty unless Type is
	// reached through a struct field.
	Path string
	// Unexported reports that Path names an unexported struct field.
	Unexported bool
	// Reason optionally explains the failure.
	Reason string
}

func (e *UnsupportedTypeError) Error() string {
	var b strings.Builder
	switch {
	case e.Unexported:
		b.WriteString("codec: unexported field ")
		b.WriteString(e.Path)
		b.WriteString(" of type ")
		b.WriteString(e.Type.String())
		b.WriteString(" (codec encodes exported fields only: export it or tag it `codec:\"-\"`)")
	case e.Path != "":
		b.WriteString("codec: no codec for field ")
		b.WriteString(e.Path)
		b.WriteString(" of type ")
		b.WriteString(e.Type.String())
	default:
		b.WriteString("codec: no codec for type ")
		b.WriteString(e.Type.String())
		if e.Root != nil && e.Root != e.Type {
			b.WriteString(" in ")
			b.WriteString(e.Root.String())
		}
	}
	if e.Reason != "" {
		b.WriteString(": ")
		b.WriteString(e.Reason)
	}
	return b.String()
}
