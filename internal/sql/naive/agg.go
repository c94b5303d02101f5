package naive

import (
	"fmt"
	"math"
	"math/big"

	"github.com/weir-stream/weir/internal/sql/plan"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// aggregateCall computes one aggregate over a group's rows: over the
// non-NULL arguments of the rows its FILTER is TRUE for (all rows for
// COUNT(*)), each distinct value once under DISTINCT. SUM, AVG, MIN,
// MAX, FIRST_VALUE and LAST_VALUE of no values are NULL.
func aggregateCall(a plan.AggCall, rows []row.Row) (row.Value, error) {
	var vals []row.Value
	seen := map[string]bool{}
	for _, r := range rows {
		if a.Filter >= 0 {
			if f := r.V[a.Filter]; f.IsNull() || !f.Bool() {
				continue
			}
		}
		if a.Arg < 0 {
			vals = append(vals, row.BigInt(1))
			continue
		}
		v := r.V[a.Arg]
		if v.IsNull() {
			continue
		}
		if a.Distinct {
			k := string(row.AppendValue(nil, v))
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		vals = append(vals, v)
	}
	if a.Fn == "COUNT" {
		return row.BigInt(int64(len(vals))), nil
	}
	if len(vals) == 0 {
		return row.Null(), nil
	}
	switch a.Fn {
	case "FIRST_VALUE":
		return vals[0], nil
	case "LAST_VALUE":
		return vals[len(vals)-1], nil
	case "MIN", "MAX":
		best := vals[0]
		for _, v := range vals[1:] {
			if c := row.Compare(v, best); a.Fn == "MIN" && c < 0 || a.Fn == "MAX" && c > 0 {
				best = v
			}
		}
		return best, nil
	case "SUM", "AVG":
		return sumOrAvg(a, vals)
	}
	return row.Value{}, fmt.Errorf("naive: aggregate %s is not supported", a.Fn)
}

// sumOrAvg adds the values exactly and, for AVG, divides by their
// count: integers truncating, DECIMALs rounding half up to the result's
// scale, DOUBLEs in floating point.
func sumOrAvg(a plan.AggCall, vals []row.Value) (row.Value, error) {
	n := int64(len(vals))
	switch a.In.Kind {
	case types.Double:
		var f float64
		for _, v := range vals {
			f += v.Float()
		}
		if a.Fn == "AVG" {
			f /= float64(n)
		}
		return row.Double(f), nil
	case types.Int, types.BigInt:
		var s int64
		for _, v := range vals {
			s += v.I
		}
		if a.Fn == "AVG" {
			s /= n
		}
		if a.T.Kind == types.Int {
			if s > math.MaxInt32 || s < math.MinInt32 {
				s = int64(int32(s))
			}
			return row.Int(int32(s)), nil
		}
		return row.BigInt(s), nil
	case types.Decimal:
		sum := new(big.Rat)
		for _, v := range vals {
			sum.Add(sum, big.NewRat(v.I, 1))
		}
		// sum is unscaled at the argument's scale; rescale to the result's.
		q := new(big.Rat).Mul(sum, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(a.T.Scale-a.In.Scale)), nil)))
		if a.Fn == "AVG" {
			q.Quo(q, big.NewRat(n, 1))
		}
		return row.Decimal(roundHalfUp(q)), nil
	}
	return row.Value{}, fmt.Errorf("naive: %s of %s is not supported", a.Fn, a.In)
}

// roundHalfUp rounds q to an integer, halves away from zero.
func roundHalfUp(q *big.Rat) int64 {
	num, den := new(big.Int).Abs(q.Num()), q.Denom()
	i, r := new(big.Int).QuoRem(num, den, new(big.Int))
	if r.Mul(r, big.NewInt(2)).Cmp(den) >= 0 {
		i.Add(i, big.NewInt(1))
	}
	if q.Sign() < 0 {
		i.Neg(i)
	}
	return i.Int64()
}
