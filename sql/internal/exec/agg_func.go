package exec

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// AggSpec is one aggregate call of a GROUP BY or window aggregation, by
// column index of the operator's input.
type AggSpec struct {
	// Fn is the aggregate's name, case-insensitive: COUNT, SUM, MIN, MAX,
	// AVG, FIRST_VALUE, LAST_VALUE, or a name registered with
	// RegisterAggregate.
	Fn string
	// Arg is the argument's column; -1 for COUNT(*).
	Arg int
	// Distinct aggregates each distinct non-NULL value once.
	Distinct bool
	// Filter is the column of a BOOLEAN the row is aggregated under
	// (FILTER (WHERE ...)): NULL or FALSE skips the row. -1 for none.
	Filter int
	// In is the argument's type (ignored for COUNT(*)).
	In types.Type
}

// fnKind is a built-in aggregate, or a user-defined one.
type fnKind uint8

const (
	fnCount fnKind = iota
	fnSum
	fnAvg
	fnMin
	fnMax
	fnFirst
	fnLast
	fnUser
)

var builtins = map[string]fnKind{"COUNT": fnCount, "SUM": fnSum, "AVG": fnAvg, "MIN": fnMin, "MAX": fnMax,
	"FIRST_VALUE": fnFirst, "LAST_VALUE": fnLast}

// AggResultType returns the result type of aggregate fn over an argument
// of type in, as Flink types it: COUNT is BIGINT NOT NULL; SUM of INT is
// INT, of BIGINT BIGINT, of DOUBLE DOUBLE, of DECIMAL(p, s)
// DECIMAL(38, s); AVG of an integer type is that type (the quotient
// truncates), of DOUBLE DOUBLE, of DECIMAL(p, s) DECIMAL(38, max(6, s));
// MIN, MAX, FIRST_VALUE and LAST_VALUE keep in's type. Every result but
// COUNT's is nullable (NULL over no values). DISTINCT does not change a
// type. It fails for an unknown aggregate and for an argument type the
// aggregate does not take.
func AggResultType(fn string, distinct bool, in types.Type) (types.Type, error) {
	k, ok := builtins[strings.ToUpper(fn)]
	if !ok {
		f, ok := LookupAggregate(fn)
		if !ok {
			return types.Type{}, fmt.Errorf("exec: unknown aggregate function %s", fn)
		}
		return f.ResultType(in)
	}
	in = in.Plain().Nullable()
	switch k {
	case fnCount:
		return types.Type{Kind: types.BigInt, NotNull: true}, nil
	case fnSum, fnAvg:
		switch in.Kind {
		case types.Int, types.BigInt, types.Double:
			return in, nil
		case types.Decimal:
			if k == fnSum {
				return types.DecimalOf(types.MaxPrecision, in.Scale), nil
			}
			return types.DecimalOf(types.MaxPrecision, max(6, in.Scale)), nil
		}
	case fnMin, fnMax, fnFirst, fnLast:
		if in.Kind != types.Null && in.Kind != types.Row {
			return in, nil
		}
	}
	return types.Type{}, fmt.Errorf("exec: %s does not take an argument of type %s", strings.ToUpper(fn), in)
}

// accumulator is the state of one aggregate call for one group (or
// window), in a form codec.For encodes.
type accumulator struct {
	// N counts the values aggregated (non-NULL, unfiltered; rows for
	// COUNT(*)), less those retracted; for DISTINCT, distinct values.
	N int64
	// Sum is the sum of INT, BIGINT and DECIMAL values (unscaled).
	Sum int64
	// F is the sum of DOUBLE values.
	F float64
	// V is the MIN, MAX, FIRST_VALUE or LAST_VALUE so far.
	V row.Value
	// Vals maps values (row.AppendValue) to their counts: the distinct
	// values of a DISTINCT aggregate, or every value of a MIN or MAX that
	// retracts (Flink's MinWithRetractAggFunction keeps the same map).
	Vals map[string]int64
	// UDF is the encoding of a user-defined aggregate's accumulator.
	UDF []byte
}

// aggFunc is an AggSpec compiled for an operator.
type aggFunc struct {
	spec AggSpec
	kind fnKind
	out  types.Type
	// retract says the input may retract, so MIN and MAX keep Vals.
	retract bool
	udf     AggregateFunction
}

// compileAggs checks specs and compiles them; retract says whether the
// input may hold -U and -D rows.
func compileAggs(specs []AggSpec, retract bool) ([]aggFunc, error) {
	fs := make([]aggFunc, len(specs))
	for i, s := range specs {
		out, err := AggResultType(s.Fn, s.Distinct, s.In)
		if err != nil {
			return nil, err
		}
		k, ok := builtins[strings.ToUpper(s.Fn)]
		f := aggFunc{spec: s, kind: k, out: out, retract: retract}
		if !ok {
			f.kind = fnUser
			f.udf, _ = LookupAggregate(s.Fn)
			if _, can := f.udf.NewAccumulator().(Retractor); retract && !can {
				return nil, fmt.Errorf("exec: aggregate %s cannot retract, and its input updates", s.Fn)
			}
		}
		if retract && (k == fnFirst || k == fnLast) && ok {
			return nil, fmt.Errorf("exec: %s over an updating input is not supported", strings.ToUpper(s.Fn))
		}
		if s.Arg < 0 && k != fnCount {
			return nil, fmt.Errorf("exec: %s needs an argument", s.Fn)
		}
		if k == fnMin || k == fnMax {
			f.spec.Distinct = false // MIN(DISTINCT x) is MIN(x)
		}
		fs[i] = f
	}
	return fs, nil
}

// add accumulates (sign 1) or retracts (sign -1) row r into a.
func (f *aggFunc) add(a *accumulator, r row.Row, sign int64) {
	if c := f.spec.Filter; c >= 0 && (r.V[c].IsNull() || !r.V[c].Bool()) {
		return
	}
	v := row.Bool(true) // COUNT(*) counts rows
	if f.spec.Arg >= 0 {
		v = r.V[f.spec.Arg]
		if v.IsNull() && f.kind != fnUser {
			return
		}
	}
	if f.spec.Distinct {
		key := string(row.AppendValue(nil, v))
		n := a.Vals[key]
		switch {
		case sign > 0:
			if a.Vals == nil {
				a.Vals = map[string]int64{}
			}
			a.Vals[key] = n + 1
			if n > 0 {
				return
			}
		case n == 0:
			return // a retraction of a value never seen (expired state)
		case n == 1:
			delete(a.Vals, key)
		default:
			a.Vals[key] = n - 1
			return
		}
	}
	f.apply(a, v, sign)
}

// apply folds one value into a.
func (f *aggFunc) apply(a *accumulator, v row.Value, sign int64) {
	switch f.kind {
	case fnCount:
		a.N += sign
	case fnSum, fnAvg:
		a.N += sign
		if f.spec.In.Kind == types.Double {
			a.F += float64(sign) * v.Float()
		} else {
			a.Sum += sign * v.I
		}
	case fnMin, fnMax:
		f.applyExtreme(a, v, sign)
	case fnFirst:
		if a.N == 0 {
			a.V = v
		}
		a.N++
	case fnLast:
		a.V = v
		a.N++
	case fnUser:
		acc := f.decodeUDF(a)
		if sign > 0 {
			acc.Accumulate(v)
		} else {
			acc.(Retractor).Retract(v)
		}
		f.encodeUDF(a, acc)
	}
}

// better reports whether v beats the current extreme cur.
func (f *aggFunc) better(v, cur row.Value) bool {
	if cur.IsNull() {
		return true
	}
	c := row.Compare(v, cur)
	return f.kind == fnMin && c < 0 || f.kind == fnMax && c > 0
}

func (f *aggFunc) applyExtreme(a *accumulator, v row.Value, sign int64) {
	a.N += sign
	if !f.retract {
		if f.better(v, a.V) {
			a.V = v
		}
		return
	}
	key := string(row.AppendValue(nil, v))
	n := a.Vals[key] + sign
	switch {
	case n > 0:
		if a.Vals == nil {
			a.Vals = map[string]int64{}
		}
		a.Vals[key] = n
		if sign > 0 && f.better(v, a.V) {
			a.V = v
		}
	case n < 0 && sign < 0:
		a.N++ // a retraction of a value never seen (expired state)
	default:
		delete(a.Vals, key)
		if row.Equal(v, a.V) {
			a.V = f.extremeOf(a.Vals)
		}
	}
}

// extremeOf returns the MIN or MAX of the values of vals (NULL if none).
func (f *aggFunc) extremeOf(vals map[string]int64) row.Value {
	var best row.Value
	for k := range vals {
		var v row.Value
		if _, err := row.DecodeValue([]byte(k), &v); err != nil {
			panic(fmt.Sprintf("exec: corrupt value in aggregate state: %v", err))
		}
		if f.better(v, best) {
			best = v
		}
	}
	return best
}

// merge returns the accumulator of a and b's inputs together (for
// merging session windows).
func (f *aggFunc) merge(a, b accumulator) accumulator {
	if f.spec.Distinct {
		m := accumulator{Vals: make(map[string]int64, len(a.Vals)+len(b.Vals))}
		for _, vs := range []map[string]int64{a.Vals, b.Vals} {
			for k, n := range vs {
				m.Vals[k] += n
			}
		}
		for k := range m.Vals {
			var v row.Value
			if _, err := row.DecodeValue([]byte(k), &v); err != nil {
				panic(fmt.Sprintf("exec: corrupt value in aggregate state: %v", err))
			}
			f.apply(&m, v, 1)
		}
		return m
	}
	switch f.kind {
	case fnMin, fnMax:
		m := accumulator{N: a.N + b.N, V: a.V}
		if f.better(b.V, a.V) && !b.V.IsNull() {
			m.V = b.V
		}
		if len(a.Vals)+len(b.Vals) > 0 {
			m.Vals = make(map[string]int64, len(a.Vals)+len(b.Vals))
			for _, vs := range []map[string]int64{a.Vals, b.Vals} {
				for k, n := range vs {
					m.Vals[k] += n
				}
			}
		}
		return m
	case fnUser:
		x, y := f.decodeUDF(&a), f.decodeUDF(&b)
		x.Merge(y)
		var m accumulator
		f.encodeUDF(&m, x)
		return m
	}
	// COUNT, SUM and AVG; FIRST_VALUE and LAST_VALUE do not merge
	// (WindowAggregate refuses them over sessions).
	return accumulator{N: a.N + b.N, Sum: a.Sum + b.Sum, F: a.F + b.F}
}

// result returns the aggregate's value for a.
func (f *aggFunc) result(a *accumulator) row.Value {
	switch f.kind {
	case fnCount:
		return row.BigInt(a.N)
	case fnUser:
		return f.decodeUDF(a).Result()
	}
	if a.N <= 0 {
		return row.Null()
	}
	switch f.kind {
	case fnSum:
		return f.sumValue(a.Sum, a.F)
	case fnAvg:
		switch f.spec.In.Kind {
		case types.Double:
			return row.Double(a.F / float64(a.N))
		case types.Decimal:
			return row.Decimal(avgDecimal(a.Sum, a.N, f.out.Scale-f.spec.In.Scale))
		}
		return f.sumValue(a.Sum/a.N, 0)
	}
	return a.V
}

// sumValue returns an integer, DECIMAL or DOUBLE sum as a value of the
// argument's kind; an INT wraps as Java's int does.
func (f *aggFunc) sumValue(sum int64, fsum float64) row.Value {
	switch f.spec.In.Kind {
	case types.Int:
		return row.Int(int32(sum))
	case types.Double:
		return row.Double(fsum)
	case types.Decimal:
		return row.Decimal(sum)
	}
	return row.BigInt(sum)
}

// avgDecimal divides the unscaled sum by n, raising the scale by up,
// rounding half away from zero (Java's HALF_UP).
func avgDecimal(sum, n int64, up int32) int64 {
	q := new(big.Int).Mul(big.NewInt(sum), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(up)), nil))
	d := big.NewInt(n)
	r := new(big.Int)
	q.QuoRem(q, d, r)
	if r.Abs(r).Lsh(r, 1).Cmp(d) >= 0 {
		if sum < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q.Int64()
}

func (f *aggFunc) decodeUDF(a *accumulator) Accumulator {
	acc := f.udf.NewAccumulator()
	if len(a.UDF) > 0 {
		if _, err := acc.DecodeBinary(a.UDF); err != nil {
			panic(fmt.Sprintf("exec: aggregate %s: corrupt accumulator: %v", f.spec.Fn, err))
		}
	}
	return acc
}

func (f *aggFunc) encodeUDF(a *accumulator, acc Accumulator) {
	b, err := acc.AppendBinary(nil)
	if err != nil {
		panic(fmt.Sprintf("exec: aggregate %s: encoding its accumulator: %v", f.spec.Fn, err))
	}
	a.UDF = b
}
