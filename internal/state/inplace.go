package state

import "reflect"

// Mutable reports whether a copy of a V shares memory through which it
// can be changed in place: V is, or holds, a map, a slice, a pointer, an
// interface (which may hold any of them), a channel, a function or an
// unsafe pointer. Strings cannot be changed and do not count, nor do
// values of a type that declares itself Immutable.
//
// A keyed operator registers a table with TableOptions.InPlace set to
// Mutable of the type its users' functions receive from it, so that a
// function changing such a value in place (the accumulator holding a map
// that Flink habits produce) never races with a snapshot's encoding.
func Mutable[V any]() bool { return mutableType(reflect.TypeFor[V]()) }

// Immutable is implemented by a type whose values are never changed in
// place once they are in state: the code that stores them builds a new
// value instead of changing a stored one (or one it has emitted), as
// strings are. Such a type is not Mutable although it holds a slice, so
// its tables take the copy-on-write path and snapshots encode them
// asynchronously. Declaring it is a promise about every operator that
// keeps the type in state; the SQL layer's rows make it.
type Immutable interface{ ImmutableInState() }

var immutableType = reflect.TypeFor[Immutable]()

func mutableType(t reflect.Type) bool {
	if t.Implements(immutableType) {
		return false
	}
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
