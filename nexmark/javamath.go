package nexmark

import (
	"math"
	"math/big"
	"sync"
)

// javaRound reproduces Java's Math.round(double): the mathematically exact
// floor(a + 1/2), saturated to the int64 range, with NaN mapping to 0.
func javaRound(a float64) int64 {
	switch {
	case a != a: // NaN
		return 0
	case a >= 0x1p63:
		return math.MaxInt64
	case a < -0x1p63:
		return math.MinInt64
	case a >= 0x1p52 || a <= -0x1p52:
		return int64(a) // already an integer
	}
	f := math.Floor(a)
	// For |a| < 2^52, a-f is computed exactly.
	if a-f >= 0.5 {
		f++
	}
	return int64(f)
}

// nextPrice ports Beam's PriceGenerator.nextPrice:
// Math.round(Math.pow(10.0, random.nextDouble() * 6.0) * 100.0).
func nextPrice(r *JavaRandom) int64 {
	return priceFromExponent(r.NextDouble() * 6.0)
}

// priceFromExponent returns Math.round(Math.pow(10, x) * 100.0) where
// Math.pow is taken to be correctly rounded. The fast estimate exp(x*ln 10)
// is within a few ulps of the true power for 0 <= x < 6 (the rounding of
// x*ln 10 is amplified at most 14-fold); that can change the price only when
// pow*100 lies within a few ulps of a .5 boundary, so inputs within a wide
// margin (2^-40 relative, thousands of ulps) of one are recomputed with a
// high-precision power.
func priceFromExponent(x float64) int64 {
	p := math.Exp(x*math.Ln10) * 100.0
	f := p - math.Floor(p)
	if d := f - 0.5; d > p*0x1p-40 || d < -p*0x1p-40 {
		return javaRound(p)
	}
	return javaRound(pow10Exact(x) * 100.0)
}

const ln10Digits = "2.30258509299404568401799145468436420760110148862877297603332790096757260967735248023599720508959829834196778404228"

var ln10Big = sync.OnceValue(func() *big.Float {
	f, _, err := big.ParseFloat(ln10Digits, 10, 256, big.ToNearestEven)
	if err != nil {
		panic(err)
	}
	return f
})

// pow10Exact returns 10^x correctly rounded to float64 (to within far less
// than an ulp before the final rounding), for moderate x. It is slow and only
// used when math.Pow's small error could change a rounded result.
func pow10Exact(x float64) float64 {
	const prec = 256
	z := new(big.Float).SetPrec(prec).SetFloat64(x)
	z.Mul(z, ln10Big())
	// exp(z) = exp(z / 2^k)^(2^k), with z / 2^k small enough for a short
	// Taylor series.
	const k = 16
	z.SetMantExp(z, -k)
	sum := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	for n := int64(1); n < 60; n++ {
		term.Mul(term, z)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(n))
		if term.Sign() == 0 || term.MantExp(nil)-sum.MantExp(nil) < -prec {
			break
		}
		sum.Add(sum, term)
	}
	for i := 0; i < k; i++ {
		sum.Mul(sum, sum)
	}
	v, _ := sum.Float64()
	return v
}
