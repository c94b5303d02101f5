package expr

import (
	"math"
	"math/big"
	"math/bits"
)

// DECIMAL arithmetic on the run-time form of a DECIMAL(p, s): its
// unscaled value in an int64 at scale s. Each operation computes the
// exact result at the result type's scale, rounding HALF_UP (ties away
// from zero, Java's RoundingMode.HALF_UP) where digits are dropped, and
// reports ok false when the result needs more digits than the result
// type's precision or than an int64 holds: Flink answers NULL there
// (DecimalData.fromBigDecimal gives null for a value beyond the
// precision), and so does the compiled operator. The common cases run
// on 128-bit products without allocating; rare ones (shifts by more
// than 19 digits) fall back to math/big.

var pow10 = func() [19]uint64 {
	var p [19]uint64
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

const pow10_19 = 10_000_000_000_000_000_000

// tenTo returns 10^n for 0 ≤ n ≤ 19.
func tenTo(n int32) uint64 {
	if n == 19 {
		return pow10_19
	}
	return pow10[n]
}

func abs64(v int64) (uint64, bool) {
	if v < 0 {
		return uint64(-v), true // -MinInt64 wraps to 2^63, right as a uint64
	}
	return uint64(v), false
}

// signed returns ±u as an int64, or false when it does not fit.
func signed(u uint64, neg bool) (int64, bool) {
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return int64(-u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// fits reports whether unscaled v has at most p digits.
func fits(v int64, p int32) bool {
	if p >= 19 {
		return true
	}
	u, _ := abs64(v)
	return u < pow10[p]
}

// mulDiv returns round(a × b / c) HALF_UP for c > 0, or false when the
// quotient does not fit 64 bits.
func mulDiv(a, b, c uint64) (uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	if hi >= c {
		return 0, false
	}
	q, r := bits.Div64(hi, lo, c)
	if r >= c-r { // 2r ≥ c without overflow
		if q == math.MaxUint64 {
			return 0, false
		}
		q++
	}
	return q, true
}

// rescale returns v at scale `to` given at scale `from`.
func rescale(v int64, from, to int32) (int64, bool) {
	if from == to {
		return v, true
	}
	u, neg := abs64(v)
	var q uint64
	ok := true
	switch {
	case to > from && to-from <= 19:
		q, ok = mulDiv(u, tenTo(to-from), 1)
	case to < from && from-to <= 19:
		q, ok = mulDiv(u, 1, tenTo(from-to))
	default:
		return bigRescale(v, from, to)
	}
	if !ok {
		return 0, false
	}
	return signed(q, neg)
}

// decAdd returns a + b (or a - b) at scale s: exact at the larger of
// the operands' scales, then rounded once to s (which is smaller only
// when the result type gave up scale).
func decAdd(a int64, sa int32, b int64, sb int32, s int32, sub bool) (int64, bool) {
	m := max(sa, sb)
	x, ok1 := rescale(a, sa, m)
	y, ok2 := rescale(b, sb, m)
	if sub {
		y = -y
		ok2 = ok2 && y != math.MinInt64
	}
	r := x + y
	if !ok1 || !ok2 || (x >= 0) == (y >= 0) && (r >= 0) != (x >= 0) {
		return bigAdd(a, sa, b, sb, s, sub)
	}
	return rescale(r, m, s)
}

func bigAdd(a int64, sa int32, b int64, sb int32, s int32, sub bool) (int64, bool) {
	m := max(sa, sb)
	x := new(big.Int).Mul(big.NewInt(a), bigPow10(m-sa))
	y := new(big.Int).Mul(big.NewInt(b), bigPow10(m-sb))
	if sub {
		y.Neg(y)
	}
	x.Add(x, y)
	if s >= m {
		return bigRound(x.Mul(x, bigPow10(s-m)), big.NewInt(1))
	}
	return bigRound(x, bigPow10(m-s))
}

// decMul returns a × b at scale s ≤ sa + sb.
func decMul(a int64, sa int32, b int64, sb int32, s int32) (int64, bool) {
	ua, na := abs64(a)
	ub, nb := abs64(b)
	drop := sa + sb - s
	if drop < 0 || drop > 19 {
		return bigArith('*', a, sa, b, sb, s)
	}
	q, ok := mulDiv(ua, ub, tenTo(drop))
	if !ok {
		return 0, false
	}
	return signed(q, na != nb)
}

// decDiv returns a / b at scale s; b is not 0.
func decDiv(a int64, sa int32, b int64, sb int32, s int32) (int64, bool) {
	ua, na := abs64(a)
	ub, nb := abs64(b)
	shift := s - sa + sb
	if shift < 0 || shift > 19 {
		return bigArith('/', a, sa, b, sb, s)
	}
	q, ok := mulDiv(ua, tenTo(shift), ub)
	if !ok {
		return 0, false
	}
	return signed(q, na != nb)
}

// decMod returns a % b (sign of a, as Java's BigDecimal.remainder) at
// scale s ≥ sa, sb; b is not 0.
func decMod(a int64, sa int32, b int64, sb int32, s int32) (int64, bool) {
	x, ok1 := rescale(a, sa, s)
	y, ok2 := rescale(b, sb, s)
	if !ok1 || !ok2 {
		return bigArith('%', a, sa, b, sb, s)
	}
	if y == -1 {
		return 0, true
	}
	return x % y, true
}

// bigArith is the exact fallback of the operations above.
func bigArith(op byte, a int64, sa int32, b int64, sb int32, s int32) (int64, bool) {
	x, y := big.NewInt(a), big.NewInt(b)
	var num, den *big.Int
	switch op {
	case '*':
		num, den = x.Mul(x, y), bigPow10(sa+sb-s)
	case '/':
		if shift := s - sa + sb; shift >= 0 {
			num, den = x.Mul(x, bigPow10(shift)), y
		} else {
			num, den = x, y.Mul(y, bigPow10(-shift))
		}
	case '%':
		x.Mul(x, bigPow10(s-sa))
		y.Mul(y, bigPow10(s-sb))
		num, den = x.Rem(x, y), big.NewInt(1)
	}
	return bigRound(num, den)
}

func bigRescale(v int64, from, to int32) (int64, bool) {
	if to > from {
		n := big.NewInt(v)
		return bigRound(n.Mul(n, bigPow10(to-from)), big.NewInt(1))
	}
	return bigRound(big.NewInt(v), bigPow10(from-to))
}

// bigPow10 returns 10^n for n ≥ 0.
func bigPow10(n int32) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// bigRound returns num / den rounded HALF_UP, den > 0 or < 0.
func bigRound(num, den *big.Int) (int64, bool) {
	if den.Sign() < 0 {
		num, den = new(big.Int).Neg(num), new(big.Int).Neg(den)
	}
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	r.Abs(r).Lsh(r, 1)
	if r.Cmp(den) >= 0 {
		q.Add(q, big.NewInt(int64(num.Sign())))
	}
	if !q.IsInt64() {
		return 0, false
	}
	return q.Int64(), true
}
