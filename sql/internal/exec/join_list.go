package exec

import (
	"fmt"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/sql/row"
)

// joinSide is one side's state of a regular join: its distinct rows with
// their counts under the hash of their values (rows), or, for a side
// whose input only inserts and that is not an outer side, its rows
// appended one after another (list). Exactly one of the two is set.
type joinSide[K comparable] struct {
	rows *weir.MapState[uint64, joinRows, K]
	list *weir.ValueState[joinList, K]
}

// newJoinSide registers side name's state: a list when the side only
// inserts, is not an outer side and its rows do not expire one by one
// (a time-to-live), its distinct rows otherwise.
func newJoinSide[K comparable](sc *weir.StateContext[K], name string, list bool, spec JoinSpec) joinSide[K] {
	if list && spec.StateTTL <= 0 {
		return joinSide[K]{list: weir.NewValueState[joinList](sc, name)}
	}
	return joinSide[K]{rows: weir.NewMapState[uint64, joinRows](sc, name, spec.ttl()...)}
}

// joinList is the rows of one join key of a side that only inserts, each
// encoded as a joinEntry's Row, one after another. Such a side needs no
// count of equal rows (an equal row is held again), no number of matches
// (it is not an outer side) and never finds a row to retract, so adding a
// row hashes nothing and looks nothing up but the key, and the garbage
// collector sees one pointer per key. A stored list is never changed: a
// row is appended past its length, which no holder of the stored list
// reads (weir.Immutable), so checkpoints share it.
type joinList []byte

// ImmutableInState declares joinList never changed within its length
// (weir.Immutable).
func (joinList) ImmutableInState() {}

// appendRow adds a copy of vals to the current key's list of side.
func appendRow[K comparable](side *weir.ValueState[joinList, K], vals []row.Value) {
	l, _ := side.Value()
	// Appending within the list's capacity writes past the stored list's
	// length only; AppendBinary of an Insert row cannot fail.
	enc, _ := row.Row{Op: row.Insert, V: vals}.AppendBinary([]byte(l))
	side.Update(joinList(enc))
}

// visitList is visit over the current key's rows of a list side: it
// appends those that join with j.in to j.ms, each held once.
func (j *regularJoin[K]) visitList(l joinList) {
	for off := 0; off < len(l); {
		start := len(j.vals)
		var n int
		var err error
		if j.vals, n, err = row.AppendSharedPrefix(j.vals, l[off:]); err != nil {
			j.err = fmt.Errorf("exec: join state: %w", err)
			return
		}
		off += n
		if !j.consider(0, -1, joinEntry{Count: 1}, start) {
			return
		}
	}
}

// appendOnlyViolation is the error of a row that retracts on a side whose
// input the plan says only inserts: a broken invariant of the planner,
// which fails the job rather than leave the join's state wrong. The task
// adds the operator's name.
func (j *regularJoin[K]) appendOnlyViolation(in row.Row, inIsLeft bool) error {
	side := "right"
	if inIsLeft {
		side = "left"
	}
	return fmt.Errorf("exec: join: a %v row reached its %s side, whose input only inserts by the plan", in.Op, side)
}
