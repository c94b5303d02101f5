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
	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/sql/row"
)

// KeyBy keys s by the values of cols. With no cols every row has the
// empty key (a global aggregate: one key group does all the work).
func KeyBy(s weir.Stream[row.Row], cols []int) weir.KeyedStream[string, row.Row] {
	return weir.KeyBy(s, stringKey(cols))
}
