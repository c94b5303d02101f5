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
	"github.com/weir-stream/weir/internal/sql/types"
)

// KeyBy keys s by the values of cols. With no cols every row has the
// empty key (a global aggregate: one key group does all the work).
func KeyBy(s weir.Stream[row.Row], cols []int) weir.KeyedStream[string, row.Row] {
	return weir.KeyBy(s, stringKey(cols))
}

// intsKey is the key of a row by one or two columns of integer types
// (INT, BIGINT): their values and kinds. A row keyed by it is hashed and
// compared as three integers, where a key of its encoding is built as a
// string for every row. A NULL (kind types.Null, value 0) is a key of its
// own, distinct from 0. The kinds share one integer, so that the struct
// has no padding and maps hash and compare it as plain memory.
type intsKey struct {
	A, B  int64
	Kinds int64 // the kind of A, and of B shifted left by 8
}

// intsKeyOf returns the key of a row by integer columns cols, one or two.
// It panics on another number of columns, while the pipeline is built.
func intsKeyOf(cols []int) func(row.Row) intsKey {
	switch len(cols) {
	case 1:
		a := cols[0]
		return func(r row.Row) intsKey {
			x, kx := keyPart(r.V[a])
			return intsKey{A: x, Kinds: kx}
		}
	case 2:
		a, b := cols[0], cols[1]
		return func(r row.Row) intsKey {
			x, kx := keyPart(r.V[a])
			y, ky := keyPart(r.V[b])
			return intsKey{A: x, B: y, Kinds: kx | ky<<8}
		}
	}
	panic(fmt.Sprintf("exec: a key of %d integer columns; integer keys have one or two", len(cols)))
}

// keyPart returns integer v as a key column: its value and kind, or 0
// and types.Null if it is NULL.
func keyPart(v row.Value) (int64, int64) {
	if v.IsNull() {
		return 0, int64(types.Null)
	}
	return v.I, int64(v.K)
}
