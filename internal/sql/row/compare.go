package row

import (
	"cmp"
	"strings"

	"github.com/weir-stream/weir/internal/sql/types"
)

// Compare orders two values of one column type: NULL first, numbers by
// value (DOUBLE by float order, the integer kinds and DECIMALs of one
// scale by their integer), strings by bytes, BOOLEAN false before true.
// Values of different column types must be cast to a common type first.
func Compare(a, b Value) int {
	switch {
	case a.K == types.Null || b.K == types.Null:
		return cmp.Compare(b2i(a.K != types.Null), b2i(b.K != types.Null))
	case a.K == types.Varchar:
		return strings.Compare(a.S, b.S)
	case a.K == types.Double:
		return cmp.Compare(a.Float(), b.Float())
	}
	return cmp.Compare(a.I, b.I)
}

// Equal reports whether a and b are the same value of one column type;
// NULL equals NULL here (as in GROUP BY and DISTINCT, unlike =).
func Equal(a, b Value) bool {
	return a.K == b.K && a.I == b.I && a.S == b.S
}

// EqualValues reports whether two rows have equal values (ops aside).
func EqualValues(a, b Row) bool {
	if len(a.V) != len(b.V) {
		return false
	}
	for i := range a.V {
		if !Equal(a.V[i], b.V[i]) {
			return false
		}
	}
	return true
}
