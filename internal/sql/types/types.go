// Package types is the SQL layer's type system: the logical types of
// columns and expressions (BOOLEAN, INT, BIGINT, DOUBLE, DECIMAL(p, s),
// VARCHAR, TIMESTAMP(3), INTERVAL, ROW), their time attributes, and how
// the DDL's written types map onto them.
//
// Every SQL value of a type has one run-time form (package row): the
// integers and BOOLEAN as an int64, DOUBLE as its bits, DECIMAL(p, s) as
// its unscaled value at scale s, TIMESTAMP(3) as epoch milliseconds in
// UTC, VARCHAR as a string. A ROW column of a table is flattened into one
// column per field by the planner, so no run-time value is a row.
package types

import (
	"fmt"
	"strings"
)

// Kind is the kind of a SQL type.
type Kind uint8

// The kinds. Null is the type of the NULL literal before it takes the
// type of its context.
const (
	Null Kind = iota
	Boolean
	Int       // INT (also TINYINT, SMALLINT): 32-bit, Java's overflow
	BigInt    // BIGINT: 64-bit
	Double    // DOUBLE (also FLOAT, REAL)
	Decimal   // DECIMAL(p, s), p ≤ 38; values must fit 18 digits at run time
	Varchar   // VARCHAR, STRING, CHAR
	Timestamp // TIMESTAMP(3) and TIMESTAMP_LTZ(3): epoch milliseconds, UTC
	Interval  // INTERVAL ... (day-time): milliseconds
	Row       // ROW<...>: only as a table's column, flattened by the planner
)

var kindNames = [...]string{"NULL", "BOOLEAN", "INT", "BIGINT", "DOUBLE", "DECIMAL", "VARCHAR", "TIMESTAMP", "INTERVAL", "ROW"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// TimeAttr says whether a TIMESTAMP column is a time attribute: the
// event time a watermark is defined on, or processing time (PROCTIME()).
type TimeAttr uint8

// The time attributes.
const (
	NoTime TimeAttr = iota
	RowTime
	ProcTime
)

// Type is a SQL type.
type Type struct {
	Kind Kind
	// Precision and Scale of DECIMAL(p, s); Precision of TIMESTAMP(p).
	Precision, Scale int32
	// NotNull says no value of the type is NULL.
	NotNull bool
	// Time marks a time attribute (TIMESTAMP only).
	Time TimeAttr
	// Fields of a ROW.
	Fields []Field
}

// Field is a named field of a ROW type.
type Field struct {
	Name string
	Type Type
}

// Shorthands for the common types (nullable).
var (
	BooleanType   = Type{Kind: Boolean}
	IntType       = Type{Kind: Int}
	BigIntType    = Type{Kind: BigInt}
	DoubleType    = Type{Kind: Double}
	VarcharType   = Type{Kind: Varchar}
	TimestampType = Type{Kind: Timestamp, Precision: 3}
	IntervalType  = Type{Kind: Interval}
	NullType      = Type{Kind: Null}
)

// DecimalOf returns DECIMAL(p, s).
func DecimalOf(p, s int32) Type { return Type{Kind: Decimal, Precision: p, Scale: s} }

// MaxPrecision is the largest DECIMAL precision, as in Flink.
const MaxPrecision = 38

// String returns the type as SQL writes it: BIGINT, DECIMAL(23, 3),
// TIMESTAMP(3) *ROWTIME*, ROW<id BIGINT, ...>, with NOT NULL if so.
func (t Type) String() string {
	var b strings.Builder
	switch t.Kind {
	case Decimal:
		fmt.Fprintf(&b, "DECIMAL(%d, %d)", t.Precision, t.Scale)
	case Timestamp:
		fmt.Fprintf(&b, "TIMESTAMP(%d)", t.Precision)
		switch t.Time {
		case RowTime:
			b.WriteString(" *ROWTIME*")
		case ProcTime:
			b.WriteString(" *PROCTIME*")
		}
	case Row:
		b.WriteString("ROW<")
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f.Name + " " + f.Type.String())
		}
		b.WriteString(">")
	default:
		b.WriteString(t.Kind.String())
	}
	if t.NotNull {
		b.WriteString(" NOT NULL")
	}
	return b.String()
}

// Nullable returns t that admits NULL.
func (t Type) Nullable() Type { t.NotNull = false; return t }

// Plain returns t without its time attribute: what a time attribute
// becomes once an expression computes on it.
func (t Type) Plain() Type { t.Time = NoTime; return t }

// IsNumeric reports whether t is INT, BIGINT, DOUBLE or DECIMAL.
func (t Type) IsNumeric() bool {
	switch t.Kind {
	case Int, BigInt, Double, Decimal:
		return true
	}
	return false
}

// Same reports whether t and u are the same type, nullability and time
// attributes aside.
func (t Type) Same(u Type) bool {
	if t.Kind != u.Kind || t.Precision != u.Precision || t.Scale != u.Scale || len(t.Fields) != len(u.Fields) {
		return false
	}
	for i := range t.Fields {
		if t.Fields[i].Name != u.Fields[i].Name || !t.Fields[i].Type.Same(u.Fields[i].Type) {
			return false
		}
	}
	return true
}
