// Package exec holds the SQL layer's physical operators: the pieces the
// planner assembles from weir's own operators (Process, windows, joins,
// sinks) over streams of row.Row. Every operator takes the columns it
// works on by index; the planner projects computed arguments into
// columns before them, so no operator evaluates expressions but through
// closures it is handed.
//
// Rows are keyed by the encoding of their key columns (row.Key) as a
// string, so one keyed operator serves every key type.
package exec

import (
	"fmt"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/sql/row"
)

// KeyBy keys s by the values of cols. With no cols every row has the
// empty key (a global aggregate: one key group does all the work).
func KeyBy(s weir.Stream[row.Row], cols []int) weir.KeyedStream[string, row.Row] {
	return weir.KeyBy(s, stringKey(cols))
}

// intsKey is the key of a row by one or two columns of integer types
// (INT, BIGINT): their values, and which of them are NULL. A row keyed by
// it is hashed and compared as two integers, where a key of its encoding
// is built as a string for every row. A NULL is a key of its own,
// distinct from 0.
type intsKey struct {
	A, B  int64
	Nulls uint8 // bit i set: key column i is NULL (and its value 0)
}

// intsKeyOf returns the key of a row by integer columns cols, one or two.
// It panics on another number of columns, while the pipeline is built.
func intsKeyOf(cols []int) func(row.Row) intsKey {
	switch len(cols) {
	case 1:
		a := cols[0]
		return func(r row.Row) intsKey {
			x, nx := keyPart(r.V[a], 0)
			return intsKey{A: x, Nulls: nx}
		}
	case 2:
		a, b := cols[0], cols[1]
		return func(r row.Row) intsKey {
			x, nx := keyPart(r.V[a], 0)
			y, ny := keyPart(r.V[b], 1)
			return intsKey{A: x, B: y, Nulls: nx | ny}
		}
	}
	panic(fmt.Sprintf("exec: a key of %d integer columns; integer keys have one or two", len(cols)))
}

// keyPart returns integer v as key column i: its value, or 0 and bit i
// if it is NULL.
func keyPart(v row.Value, i uint) (int64, uint8) {
	if v.IsNull() {
		return 0, 1 << i
	}
	return v.I, 0
}
