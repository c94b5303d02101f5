package types

import "fmt"

// IntegerDecimal returns the DECIMAL type that holds every value of an
// integer type, as Flink widens integers in decimal arithmetic:
// INT → DECIMAL(10, 0), BIGINT → DECIMAL(19, 0).
func IntegerDecimal(t Type) Type {
	switch t.Kind {
	case Int:
		return DecimalOf(10, 0)
	case BigInt:
		return DecimalOf(19, 0)
	}
	return t
}

// Common returns the type both a and b widen to for comparison, CASE
// branches, UNION and IN lists: numbers to the wider number (INT <
// BIGINT < DECIMAL < DOUBLE), NULL to the other type, equal types to
// themselves. ok is false when they have none.
func Common(a, b Type) (Type, bool) {
	notNull := a.NotNull && b.NotNull
	var t Type
	switch {
	case a.Kind == Null:
		t = b
	case b.Kind == Null:
		t = a
	case a.IsNumeric() && b.IsNumeric():
		t = widerNumber(a, b)
	case a.Kind == b.Kind && a.Kind != Row:
		t = a
		if a.Kind == Timestamp && b.Precision > a.Precision {
			t = b
		}
	default:
		return Type{}, false
	}
	t.NotNull = notNull
	t.Time = NoTime
	return t, true
}

func widerNumber(a, b Type) Type {
	switch {
	case a.Kind == Double || b.Kind == Double:
		return DoubleType
	case a.Kind == Decimal || b.Kind == Decimal:
		a, b = IntegerDecimal(a), IntegerDecimal(b)
		s := max(a.Scale, b.Scale)
		p := max(a.Precision-a.Scale, b.Precision-b.Scale) + s
		return DecimalOf(min(p, MaxPrecision), s)
	case a.Kind == BigInt || b.Kind == BigInt:
		return BigIntType
	}
	return IntType
}

// Arithmetic returns the result type of a op b for op one of + - * / %,
// following Flink's rules: integers stay integers (division truncates),
// DOUBLE wins over every other number, and decimals take the precision
// and scale of Flink's LogicalTypeMerging. Timestamp ± interval is a
// timestamp.
func Arithmetic(op string, a, b Type) (Type, error) {
	notNull := a.NotNull && b.NotNull
	if a.Kind == Timestamp && b.Kind == Interval && (op == "+" || op == "-") {
		return Type{Kind: Timestamp, Precision: a.Precision, NotNull: notNull}, nil
	}
	if a.Kind == Interval && b.Kind == Timestamp && op == "+" {
		return Type{Kind: Timestamp, Precision: b.Precision, NotNull: notNull}, nil
	}
	if a.Kind == Interval && b.Kind == Interval && (op == "+" || op == "-") {
		return Type{Kind: Interval, NotNull: notNull}, nil
	}
	if a.Kind == Null {
		a = b
	}
	if b.Kind == Null {
		b = a
	}
	if !a.IsNumeric() || !b.IsNumeric() {
		return Type{}, fmt.Errorf("cannot apply %s to %s and %s", op, a, b)
	}
	var t Type
	switch {
	case a.Kind == Double || b.Kind == Double:
		t = DoubleType
	case a.Kind == Decimal || b.Kind == Decimal:
		t = decimalArithmetic(op, IntegerDecimal(a), IntegerDecimal(b))
	case op == "%":
		t = b // MOD takes the divisor's type, as Flink
		t.Kind = max(a.Kind, b.Kind)
	case a.Kind == BigInt || b.Kind == BigInt:
		t = BigIntType
	default:
		t = IntType
	}
	t.NotNull = notNull && op != "/" && op != "%"
	t.Time = NoTime
	return t, nil
}

func decimalArithmetic(op string, a, b Type) Type {
	p1, s1, p2, s2 := a.Precision, a.Scale, b.Precision, b.Scale
	var p, s int32
	switch op {
	case "+", "-":
		s = max(s1, s2)
		p = max(p1-s1, p2-s2) + s + 1
	case "*":
		p, s = p1+p2+1, s1+s2
	case "/":
		s = max(6, s1+p2+1)
		p = p1 - s1 + s2 + s
	case "%":
		s = max(s1, s2)
		p = min(p1-s1, p2-s2) + s
	}
	return adjust(p, s)
}

// adjust fits DECIMAL(p, s) into the largest precision as Flink does:
// it keeps the integer digits and gives up scale, down to 6 digits.
func adjust(p, s int32) Type {
	if p <= MaxPrecision {
		return DecimalOf(p, s)
	}
	digits := p - s
	minScale := min(s, 6)
	s = max(MaxPrecision-digits, minScale)
	return DecimalOf(MaxPrecision, s)
}

// RoundDecimal returns the type of ROUND(x, d) for x of DECIMAL type t
// and a constant d, as Flink's LogicalTypeMerging.findRoundDecimalType:
// t itself when d keeps every digit after the point, DECIMAL(p - s + 1,
// 0) when d is negative, else DECIMAL(p - s + d + 1, d): rounding may
// carry into one more integer digit.
func RoundDecimal(t Type, d int32) Type {
	p, s := t.Precision, t.Scale
	var r Type
	switch {
	case d >= s:
		r = t
	case d < 0:
		r = DecimalOf(min(MaxPrecision, 1+p-s), 0)
	default:
		r = DecimalOf(1+p-s+d, d)
	}
	r.NotNull, r.Time = t.NotNull, NoTime
	return r
}

// FloorCeilDecimal returns the type of FLOOR(x) and CEIL(x) for x of
// DECIMAL type t: DECIMAL(p, 0), as Calcite's ARG0_OR_EXACT_NO_SCALE
// that Flink keeps.
func FloorCeilDecimal(t Type) Type {
	r := DecimalOf(t.Precision, 0)
	r.NotNull = t.NotNull
	return r
}
