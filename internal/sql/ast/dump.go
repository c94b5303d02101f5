package ast

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Dump returns a compact, one-line form of a tree for tests: each node
// as its type and its non-zero fields, Type{Field:value ...}, without
// positions. Identifiers show as their name (quoted ones in
// backquotes), names as a.b, strings quoted. Two trees that differ only
// in positions have the same dump.
func Dump(n any) string {
	var b strings.Builder
	dump(&b, reflect.ValueOf(n))
	return b.String()
}

var (
	identType = reflect.TypeFor[Ident]()
	nameType  = reflect.TypeFor[Name]()
	posType   = reflect.TypeFor[Pos]()
)

func dump(b *strings.Builder, v reflect.Value) {
	if !v.IsValid() {
		b.WriteString("nil")
		return
	}
	switch v.Type() {
	case identType:
		id := v.Interface().(Ident)
		if id.Quoted {
			b.WriteString("`" + id.Name + "`")
		} else {
			b.WriteString(id.Name)
		}
		return
	case nameType:
		for i, id := range v.Interface().(Name) {
			if i > 0 {
				b.WriteString(".")
			}
			dump(b, reflect.ValueOf(id))
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		dump(b, v.Elem())
	case reflect.Struct:
		t := v.Type()
		b.WriteString(t.Name())
		b.WriteString("{")
		first := true
		for i := range t.NumField() {
			f := v.Field(i)
			if t.Field(i).Type == posType || f.IsZero() {
				continue
			}
			if !first {
				b.WriteString(" ")
			}
			first = false
			b.WriteString(t.Field(i).Name)
			b.WriteString(":")
			dump(b, f)
		}
		b.WriteString("}")
	case reflect.Slice:
		b.WriteString("[")
		for i := range v.Len() {
			if i > 0 {
				b.WriteString(" ")
			}
			dump(b, v.Index(i))
		}
		b.WriteString("]")
	case reflect.String:
		if v.Type().Name() == "string" {
			b.WriteString(strconv.Quote(v.String()))
		} else {
			b.WriteString(v.String()) // JoinKind and the like
		}
	case reflect.Bool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int:
		if s, ok := v.Interface().(fmt.Stringer); ok {
			b.WriteString(s.String())
		} else {
			b.WriteString(strconv.FormatInt(v.Int(), 10))
		}
	default:
		fmt.Fprint(b, v.Interface())
	}
}
