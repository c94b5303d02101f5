// Package row is the run-time form of SQL rows: a Row is a changelog
// operation and a slice of Values, and a Value is one SQL value of any
// type in 32 bytes, with no allocation but a string's bytes.
//
// A Value does not carry its SQL type beyond its kind; the column's type
// (package types) says how to read it: a DECIMAL(p, s) is its unscaled
// value at scale s, a TIMESTAMP(3) epoch milliseconds, a DOUBLE its IEEE
// bits. Rows encode themselves (AppendBinary, DecodeBinary), so the
// engine's codecs carry them between tasks and into state.
package row

import (
	"math"
	"strconv"
	"unsafe"

	"github.com/weir-stream/weir/internal/sql/types"
)

// Value is one SQL value. K is its kind (types.Null for NULL); I holds
// every kind but VARCHAR, S holds VARCHAR.
type Value struct {
	S string
	I int64
	K types.Kind
}

// Constructors of Values.
func Null() Value                  { return Value{} }
func Bool(b bool) Value            { return Value{K: types.Boolean, I: b2i(b)} }
func Int(v int32) Value            { return Value{K: types.Int, I: int64(v)} }
func BigInt(v int64) Value         { return Value{K: types.BigInt, I: v} }
func Double(f float64) Value       { return Value{K: types.Double, I: int64(math.Float64bits(f))} }
func Decimal(unscaled int64) Value { return Value{K: types.Decimal, I: unscaled} }
func String(s string) Value        { return Value{K: types.Varchar, S: s} }
func Timestamp(ms int64) Value     { return Value{K: types.Timestamp, I: ms} }
func Interval(ms int64) Value      { return Value{K: types.Interval, I: ms} }

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// IsNull reports whether v is NULL.
func (v Value) IsNull() bool { return v.K == types.Null }

// Bool returns a BOOLEAN's value (false for NULL).
func (v Value) Bool() bool { return v.I != 0 }

// Float returns a DOUBLE's value.
func (v Value) Float() float64 { return math.Float64frombits(uint64(v.I)) }

// Text returns v as SQL's CAST(v AS VARCHAR) would for kinds whose text
// does not depend on the column type (not DECIMAL, whose scale the type
// holds); for debugging and explain output.
func (v Value) Text() string {
	switch v.K {
	case types.Null:
		return "NULL"
	case types.Boolean:
		if v.Bool() {
			return "TRUE"
		}
		return "FALSE"
	case types.Double:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case types.Varchar:
		return strconv.Quote(v.S)
	}
	return strconv.FormatInt(v.I, 10)
}

// Op is the changelog operation of a row, as Flink's RowKind.
type Op uint8

// The operations. An append-only stream has only Insert rows.
const (
	Insert       Op = iota // +I
	UpdateBefore           // -U: retracts the row's earlier value
	UpdateAfter            // +U: the row's new value
	Delete                 // -D
)

var opNames = [...]string{"+I", "-U", "+U", "-D"}

func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "Op(" + strconv.Itoa(int(o)) + ")"
}

// Retracts reports whether o takes a row away (-U, -D).
func (o Op) Retracts() bool { return o == UpdateBefore || o == Delete }

// Row is one row of a SQL relation: its changelog operation and its
// column values in the relation's column order.
//
// A Row's values are never changed in place once it is kept in state or
// emitted by an operator that keeps it: the snapshot being written may
// share them. Code that needs other values builds a new slice (only a
// source's own fresh rows may be overwritten, by the one operator that
// reads them). Rows declare this to the state backend (ImmutableInState),
// which therefore snapshots tables of rows copy-on-write and encodes them
// asynchronously, and to the exchange (ShareableValue), which passes them
// to a subtask of the same process as they are.
type Row struct {
	Op Op
	V  []Value
}

// ImmutableInState declares that rows in state are never changed in
// place (see Row).
func (Row) ImmutableInState() {}

// ShareableValue declares that emitted rows are never changed in place
// (see Row, codec.Shareable): rows pass between subtasks of one process
// without being encoded.
func (Row) ShareableValue() {}

// SizeInMemory returns the bytes r's values hold: its slice of Values and
// their strings. The exchange counts it toward the bounds on retained
// output.
func (r Row) SizeInMemory() int {
	n := cap(r.V) * int(unsafe.Sizeof(Value{}))
	for i := range r.V {
		n += len(r.V[i].S)
	}
	return n
}

// New returns an Insert row of the values.
func New(vs ...Value) Row { return Row{V: vs} }

// Clone returns a copy of r whose values do not share r's slice.
func (r Row) Clone() Row {
	return Row{Op: r.Op, V: append([]Value(nil), r.V...)}
}
