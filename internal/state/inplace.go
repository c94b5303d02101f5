package state

import "reflect"

// Mutable reports whether a copy of a V shares memory through which it
// can be changed in place: V is, or holds, a map, a slice, a pointer, an
// interface (which may hold any of them), a channel, a function or an
// unsafe pointer. Strings cannot be changed and do not count.
//
// A keyed operator registers a table with TableOptions.InPlace set to
// Mutable of the type its users' functions receive from it, so that a
// function changing such a value in place (the accumulator holding a map
// that Flink habits produce) never races with a snapshot's encoding.
func Mutable[V any]() bool { return mutableType(reflect.TypeFor[V]()) }

func mutableType(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Map, reflect.Slice, reflect.Pointer, reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	case reflect.Array:
		return t.Len() > 0 && mutableType(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if mutableType(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}
