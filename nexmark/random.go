package nexmark

// JavaRandom is a bit-exact port of java.util.Random: a 48-bit linear
// congruential generator with multiplier 0x5DEECE66D and increment 0xB.
//
// Beam's Nexmark generator seeds a fresh java.util.Random with each event id
// and draws every field of the event from it, so reproducing Beam's event
// stream requires reproducing java.util.Random exactly, including the
// rejection loop of NextInt(bound) and the integer overflow behaviour of Java
// int/long arithmetic.
//
// The zero value is a generator with internal state 0, which is not the same
// as NewJavaRandom(0) (the seed is scrambled); use NewJavaRandom. A JavaRandom
// is a small value type and is not safe for concurrent use.
type JavaRandom struct {
	seed uint64 // only the low 48 bits are used
}

const (
	javaRandMultiplier = 0x5DEECE66D
	javaRandAddend     = 0xB
	javaRandMask       = (1 << 48) - 1
)

// NewJavaRandom returns a generator in the same state as Java's
// new java.util.Random(seed).
func NewJavaRandom(seed int64) JavaRandom {
	return JavaRandom{seed: (uint64(seed) ^ javaRandMultiplier) & javaRandMask}
}

// SetSeed resets r to the state of new java.util.Random(seed).
func (r *JavaRandom) SetSeed(seed int64) {
	r.seed = (uint64(seed) ^ javaRandMultiplier) & javaRandMask
}

// next advances the LCG and returns its top bits (1 <= bits <= 32), like
// Java's protected Random.next(int bits), including the sign of the int
// result when bits == 32.
func (r *JavaRandom) next(bits uint) int32 {
	r.seed = (r.seed*javaRandMultiplier + javaRandAddend) & javaRandMask
	return int32(uint32(r.seed >> (48 - bits)))
}

// NextInt returns the next int32 over the whole int range, like Java's
// Random.nextInt().
func (r *JavaRandom) NextInt() int32 {
	return r.next(32)
}

// NextIntn returns a value in [0, bound), like Java's Random.nextInt(int
// bound) (Java 8 through 17 algorithm: a power-of-two fast path, otherwise a
// modulo with rejection of the biased tail). It panics if bound <= 0, where
// Java throws IllegalArgumentException.
func (r *JavaRandom) NextIntn(bound int32) int32 {
	if bound <= 0 {
		panic("nexmark: JavaRandom.NextIntn: bound must be positive")
	}
	v := r.next(31)
	m := bound - 1
	if bound&m == 0 {
		return int32((int64(bound) * int64(v)) >> 31)
	}
	// Java: for (int u = r; u - (r = u % bound) + m < 0; u = next(31));
	// The sum is evaluated in wrapping 32-bit arithmetic, as in Java.
	for u := v; ; u = r.next(31) {
		v = u % bound
		if u-v+m >= 0 {
			return v
		}
	}
}

// NextLong returns the next int64, like Java's Random.nextLong(): two 32-bit
// draws combined as (high << 32) + low, where low is sign-extended.
func (r *JavaRandom) NextLong() int64 {
	hi := int64(r.next(32))
	lo := int64(r.next(32))
	return (hi << 32) + lo
}

// NextDouble returns a value in [0, 1) with 53 random bits, like Java's
// Random.nextDouble().
func (r *JavaRandom) NextDouble() float64 {
	hi := int64(r.next(26))
	lo := int64(r.next(27))
	return float64((hi<<27)+lo) * (1.0 / (1 << 53))
}
