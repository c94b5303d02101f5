package exec

import (
	"fmt"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/sql/row"
)

// JoinKind is the kind of a join: which sides keep their unmatched rows,
// padded with NULLs for the other side's columns.
type JoinKind uint8

// The join kinds.
const (
	InnerJoin JoinKind = iota
	LeftJoin           // LEFT OUTER JOIN: unmatched left rows are kept
	RightJoin          // RIGHT OUTER JOIN: unmatched right rows are kept
	FullJoin           // FULL OUTER JOIN: unmatched rows of both sides are kept
)

func (k JoinKind) String() string {
	switch k {
	case InnerJoin:
		return "INNER"
	case LeftJoin:
		return "LEFT"
	case RightJoin:
		return "RIGHT"
	case FullJoin:
		return "FULL"
	}
	return fmt.Sprintf("JoinKind(%d)", uint8(k))
}

// leftOuter and rightOuter report which sides the kind keeps unmatched.
func (k JoinKind) leftOuter() bool  { return k == LeftJoin || k == FullJoin }
func (k JoinKind) rightOuter() bool { return k == RightJoin || k == FullJoin }

// JoinSpec describes a join to the join operators. Which fields an
// operator reads its doc comment says; the others are ignored.
type JoinSpec struct {
	// Kind is the join kind.
	Kind JoinKind
	// LeftKeys and RightKeys are the equi-join columns of each side,
	// pairwise compared: LeftKeys[i] = RightKeys[i]. The planner casts
	// both columns of a pair to one type, since keys compare by their
	// encoding. A row with a NULL in any key column matches nothing.
	LeftKeys, RightKeys []int
	// IntKey says that the join has one key pair, of an integer type
	// (TINYINT to BIGINT) on both sides: RegularJoin is then keyed by its
	// value, cheaper to hash and to look up than an encoding.
	IntKey bool
	// LeftWidth and RightWidth are the number of columns of each side,
	// for the NULLs that pad an unmatched row of an outer join.
	LeftWidth, RightWidth int
	// LeftAppendOnly and RightAppendOnly say that a side's input only
	// inserts (+I rows), as the planner knows from its changelog mode.
	// RegularJoin then keeps the rows of such a side, unless it is an
	// outer side or its state has a time-to-live, one after another per
	// join key, with no hash of each row and no lookup of an equal one;
	// a row that retracts on it fails the job.
	LeftAppendOnly, RightAppendOnly bool
	// Cond is the residual join condition (the ON clause but the equi
	// keys), evaluated on the concatenated row, left columns then right
	// columns; a pair joins when it returns true (false and NULL do not
	// join). nil joins every pair with equal keys. An error fails the job.
	// It must not keep or change vals.
	Cond func(vals []row.Value) (bool, error)
	// StateTTL, if positive, is the time-to-live of RegularJoin's state,
	// as Flink's table.exec.state.ttl: a stored row is forgotten that long
	// (processing time) after it was last written, after which later rows
	// no longer join with it nor retract it. Results then depend on timing
	// and are not reproducible.
	StateTTL time.Duration
	// LeftTime and RightTime are the rowtime columns of an interval or
	// event-time temporal join (TIMESTAMP(3), epoch milliseconds).
	LeftTime, RightTime int
	// Lower and Upper bound an interval join:
	// r.time BETWEEN l.time + Lower AND l.time + Upper.
	Lower, Upper time.Duration
	// LeftWindow and RightWindow are the window_start and window_end
	// columns of a window join's inputs.
	LeftWindow, RightWindow [2]int
	// Name names the operator in plans, metrics and errors, and is its
	// state's uid (weir.UID); empty takes a name from the kind.
	Name string

	rowHash func([]byte) uint64 // RegularJoin's hash of a row's encoding; nil: task.HashBytes (a test makes rows collide)
}

// opts returns the operator options for the spec's name, or def's.
func (s JoinSpec) opts(def string) []weir.OpOption {
	return []weir.OpOption{weir.Name(s.name(def))}
}

// name returns the spec's name, or def.
func (s JoinSpec) name(def string) string {
	if s.Name == "" {
		return def
	}
	return s.Name
}

// ttl returns the state options of the spec's time-to-live.
func (s JoinSpec) ttl() []weir.StateOption {
	if s.StateTTL > 0 {
		return []weir.StateOption{weir.StateTTL(s.StateTTL)}
	}
	return nil
}

func (s JoinSpec) check() error {
	if len(s.LeftKeys) != len(s.RightKeys) {
		return fmt.Errorf("exec: join has %d left keys and %d right keys", len(s.LeftKeys), len(s.RightKeys))
	}
	if s.Kind > FullJoin {
		return fmt.Errorf("exec: unknown join kind %v", s.Kind)
	}
	return nil
}

// joiner concatenates rows and evaluates the residual condition, reusing
// one buffer.
type joiner struct {
	spec JoinSpec
	buf  []row.Value
}

// concat returns a new row of op: l's values then r's; a nil side is
// NULLs of its width.
func (j *joiner) concat(op row.Op, l, r []row.Value) row.Row {
	out := make([]row.Value, 0, j.spec.LeftWidth+j.spec.RightWidth)
	out = joinPad(out, l, j.spec.LeftWidth)
	out = joinPad(out, r, j.spec.RightWidth)
	return row.Row{Op: op, V: out}
}

func joinPad(dst, vals []row.Value, width int) []row.Value {
	if vals != nil {
		return append(dst, vals...)
	}
	for range width {
		dst = append(dst, row.Null())
	}
	return dst
}

// match reports whether l and r satisfy the residual condition.
func (j *joiner) match(l, r []row.Value) (bool, error) {
	if j.spec.Cond == nil {
		return true, nil
	}
	j.buf = append(append(j.buf[:0], l...), r...)
	ok, err := j.spec.Cond(j.buf)
	if err != nil {
		return false, fmt.Errorf("exec: join condition: %w", err)
	}
	return ok, nil
}

// nullKey reports whether any of r's cols is NULL: such a row matches
// nothing in an equi-join.
func nullKey(r row.Row, cols []int) bool {
	for _, c := range cols {
		if r.V[c].IsNull() {
			return true
		}
	}
	return false
}

// joinRowID is the identity of a row's values in state: equal values, equal
// ids.
func joinRowID(vals []row.Value) string {
	var buf [128]byte
	b := buf[:0]
	for _, v := range vals {
		b = row.AppendValue(b, v)
	}
	return string(b)
}

// errNotInsert is the error of an operator that takes only inserts.
func errNotInsert(op string, r row.Row) error {
	return fmt.Errorf("exec: %s takes append-only input, got a %v row", op, r.Op)
}
