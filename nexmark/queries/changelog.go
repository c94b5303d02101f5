package queries

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/weir-stream/weir"
)

// Changelog operations, as Flink's RowKind.
const (
	Insert       = "+I"
	UpdateBefore = "-U"
	UpdateAfter  = "+U"
	Delete       = "-D"
)

// Changelog turns a keyed stream of new values into changelog rows, as a
// Flink upsert query's output: the first value of a key becomes
// row(Insert, v); a later different value v2 after v becomes
// row(UpdateBefore, v) then row(UpdateAfter, v2); an equal value emits
// nothing. The final table a changelog means is obtained by applying the
// rows in order (ApplyChangelog).
func Changelog[K comparable, V comparable, R any](ks weir.KeyedStream[K, V], row func(op string, v V) R, os ...weir.OpOption) weir.Stream[R] {
	return weir.Process(ks, func() weir.KeyedProcessFunction[K, V, R] {
		return &changelog[K, V, R]{row: row}
	}, os...)
}

type changelog[K comparable, V comparable, R any] struct {
	row  func(string, V) R
	last *weir.ValueState[V, K]
}

func (c *changelog[K, V, R]) Open(sc *weir.StateContext[K]) error {
	c.last = weir.NewValueState[V](sc, "last")
	return nil
}

func (c *changelog[K, V, R]) ProcessElement(ctx *weir.KeyedContext[K, R], v V) error {
	old, ok := c.last.Value()
	switch {
	case !ok:
		ctx.Emit(c.row(Insert, v))
	case old == v:
		return nil
	default:
		ctx.Emit(c.row(UpdateBefore, old))
		ctx.Emit(c.row(UpdateAfter, v))
	}
	c.last.Update(v)
	return nil
}

// ErrBrokenChangelog is wrapped by ApplyChangelog's errors: a row without
// a changelog op, with an unknown op, or retracting a row that is not in
// the table.
var ErrBrokenChangelog = errors.New("not a valid changelog")

// IsChangelog reports whether rows (JSON lines as the file sink writes
// them) are a changelog: whether the first row's first field is "op".
func IsChangelog(rows []string) bool {
	return len(rows) > 0 && strings.HasPrefix(rows[0], `{"op":"`)
}

// ApplyChangelog folds changelog rows, in the order they were written,
// into the final table they mean: the multiset of rows, without "op",
// that were inserted or updated-after and not retracted since. Rows are
// folded as text, which works because the file sink encodes equal rows
// equally; the final rows are then re-encoded with sorted keys, so that
// tables built from maps compare equal, and returned sorted.
//
// A changelog of a parallel query is not unique: the updates a row goes
// through depend on the order in which a task consumed its inputs. Its
// final table is. A row that was lost or written twice shows as a
// retraction of a row not in the table (a later update retracts a value
// the lost row would have put there) or as another final table.
func ApplyChangelog(rows []string) ([]string, error) {
	table := map[string]int{}
	for i, r := range rows {
		op, rest, ok := strings.Cut(strings.TrimPrefix(r, `{"op":"`), `",`)
		if !ok || !strings.HasPrefix(r, `{"op":"`) {
			return nil, fmt.Errorf("%w: row %d has no leading changelog op: %s", ErrBrokenChangelog, i+1, r)
		}
		row := "{" + rest
		switch op {
		case Insert, UpdateAfter:
			table[row]++
		case UpdateBefore, Delete:
			if table[row] == 0 {
				return nil, fmt.Errorf("%w: row %d retracts a row that is not in the table: %s", ErrBrokenChangelog, i+1, r)
			}
			table[row]--
		default:
			return nil, fmt.Errorf("%w: row %d has an unknown changelog op %q: %s", ErrBrokenChangelog, i+1, op, r)
		}
	}
	var out []string
	for row, n := range table {
		var m map[string]any
		if err := json.Unmarshal([]byte(row), &m); err != nil {
			return nil, fmt.Errorf("%w: row %s: %v", ErrBrokenChangelog, row, err)
		}
		b, err := json.Marshal(m) // map keys sort
		if err != nil {
			return nil, fmt.Errorf("re-encoding row %s: %w", row, err)
		}
		for range n {
			out = append(out, string(b))
		}
	}
	slices.Sort(out)
	return out, nil
}
