package nexmark

import (
	"math"
	"testing"
)

// The expected values below were printed by a small Java 17 program
// (OpenJDK 17.0.15) that, for each seed, constructed new java.util.Random(seed)
// and printed three nextInt(), then nextInt(b) for each bound in
// randomTestBounds in order, then two nextLong(), then two nextDouble() as raw
// IEEE-754 bits, all from the same Random instance.

var randomTestBounds = []int32{1, 2, 3, 10, 13, 26, 50, 64, 1000, 10000, 1 << 30, (1 << 30) + 1, math.MaxInt32}

var randomTestCases = []struct {
	seed    int64
	ints    []int32
	bounded []int32
	longs   []int64
	doubles []uint64
}{
	{seed: 0, ints: []int32{-1155484576, -723955400, 1033096058}, bounded: []int32{0, 1, 2, 1, 2, 3, 4, 21, 677, 7473, 658242131, 49567875, 2021317241}, longs: []int64{3246199166113899023, 5772649832669734744}, doubles: []uint64{0x3fd78cea32587af8, 0x3fe690caa02f9778}},
	{seed: 1, ints: []int32{-1155869325, 431529176, 1761283695}, bounded: []int32{0, 0, 1, 4, 9, 22, 48, 0, 473, 317, 171345631, 1046012189, 852925376}, longs: []int64{-1587104797948448451, 2939296080422457956}, doubles: []uint64{0x3fd79dbce81a8e92, 0x3feba9ae48ed8027}},
	{seed: 42, ints: []int32{-1170105035, 234785527, -1360544799}, bounded: []int32{0, 0, 1, 5, 3, 3, 43, 57, 502, 5276, 409786146, 592164476, 1482678032}, longs: []int64{8552898714322622292, -4004755535478349341}, doubles: []uint64{0x3fed6b22193735e3, 0x3fdbef77d7096b88}},
	{seed: -1, ints: []int32{1155099827, 1887904451, 52699159}, bounded: []int32{0, 1, 0, 7, 12, 9, 31, 51, 512, 4317, 74760098, 176890342, 1481972250}, longs: []int64{-5110998876361204119, -8129419283323851490}, doubles: []uint64{0x3fe32ce07acf4463, 0x3fedc49273a24dfe}},
	{seed: 1000, ints: []int32{-1244746321, 1060493871, -1826063944}, bounded: []int32{0, 1, 2, 1, 9, 10, 0, 28, 159, 8372, 441145691, 18482002, 2092715323}, longs: []int64{6523318656834523421, -4589969504786424101}, doubles: []uint64{0x3feedc296ad999c1, 0x3fe6d2bc2916ec1d}},
	{seed: 123456789012345, ints: []int32{-1421006947, -2071311287, -583755257}, bounded: []int32{0, 1, 1, 0, 5, 1, 34, 54, 31, 5156, 73479384, 600863488, 1442513241}, longs: []int64{-6007590490744202600, -6059919002218650048}, doubles: []uint64{0x3fb8dfd8b7e22108, 0x3fe3269633b36ead}},
	{seed: math.MinInt64, ints: []int32{-1155484576, -723955400, 1033096058}, bounded: []int32{0, 1, 2, 1, 2, 3, 4, 21, 677, 7473, 658242131, 49567875, 2021317241}, longs: []int64{3246199166113899023, 5772649832669734744}, doubles: []uint64{0x3fd78cea32587af8, 0x3fe690caa02f9778}},
	{seed: math.MaxInt64, ints: []int32{1155099827, 1887904451, 52699159}, bounded: []int32{0, 1, 0, 7, 12, 9, 31, 51, 512, 4317, 74760098, 176890342, 1481972250}, longs: []int64{-5110998876361204119, -8129419283323851490}, doubles: []uint64{0x3fe32ce07acf4463, 0x3fedc49273a24dfe}},
	{seed: 0x5DEECE66D, ints: []int32{0, 4232237, 178803790}, bounded: []int32{0, 0, 2, 9, 9, 22, 46, 14, 521, 8121, 609949364, 109160704, 1647229822}, longs: []int64{348916538551215676, 5500766938478954552}, doubles: []uint64{0x3fe102838f5cb1c4, 0x3fe07e697e7bc26f}},
}

func TestJavaRandomKnownValues(t *testing.T) {
	for _, tc := range randomTestCases {
		r := NewJavaRandom(tc.seed)
		for i, want := range tc.ints {
			if got := r.NextInt(); got != want {
				t.Errorf("seed %d: nextInt()#%d = %d, want %d", tc.seed, i, got, want)
			}
		}
		for i, b := range randomTestBounds {
			if got := r.NextIntn(b); got != tc.bounded[i] {
				t.Errorf("seed %d: nextInt(%d) = %d, want %d", tc.seed, b, got, tc.bounded[i])
			}
		}
		for i, want := range tc.longs {
			if got := r.NextLong(); got != want {
				t.Errorf("seed %d: nextLong()#%d = %d, want %d", tc.seed, i, got, want)
			}
		}
		for i, want := range tc.doubles {
			if got := math.Float64bits(r.NextDouble()); got != want {
				t.Errorf("seed %d: nextDouble()#%d bits = %#x, want %#x", tc.seed, i, got, want)
			}
		}
	}
}

// The checksums come from the same Java program: new Random(7), then 100,000
// draws folded as sum = sum*31 + draw (Java long arithmetic, wrapping).
func TestJavaRandomRejectionLoop(t *testing.T) {
	// A bound just above 2^30 rejects about half of the raw draws.
	r := NewJavaRandom(7)
	var sum int64
	for i := 0; i < 100000; i++ {
		sum = sum*31 + int64(r.NextIntn((1<<30)+1))
	}
	if want := int64(7188991967880090753); sum != want {
		t.Errorf("rejection checksum = %d, want %d", sum, want)
	}
	// Bounds 1..1000, mixing the power-of-two path and the modulo path.
	r.SetSeed(7)
	sum = 0
	for i := 0; i < 100000; i++ {
		sum = sum*31 + int64(r.NextIntn(int32(1+i%1000)))
	}
	if want := int64(-7317851583547961416); sum != want {
		t.Errorf("mixed checksum = %d, want %d", sum, want)
	}
}

func TestJavaRandomNextIntnPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NextIntn(0) did not panic")
		}
	}()
	r := NewJavaRandom(1)
	r.NextIntn(0)
}

func TestJavaRound(t *testing.T) {
	cases := []struct {
		in   float64
		want int64
	}{
		{0, 0}, {0.49999999999999994, 0}, {0.5, 1}, {1.5, 2}, {2.5, 3}, {-2.5, -2}, {-2.6, -3},
		{13.600000000000001, 14}, {1e300, math.MaxInt64}, {-1e300, math.MinInt64},
		{math.NaN(), 0}, {math.Inf(1), math.MaxInt64}, {0x1p52 + 1, 1<<52 + 1}, {4503599627370495.5, 4503599627370496},
	}
	for _, c := range cases {
		if got := javaRound(c.in); got != c.want {
			t.Errorf("javaRound(%v) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestPow10Exact(t *testing.T) {
	for k := 0; k <= 6; k++ {
		if got, want := pow10Exact(float64(k)), math.Pow10(k); got != want {
			t.Errorf("pow10Exact(%d) = %v, want %v", k, got, want)
		}
	}
	if got, want := pow10Exact(0.5), math.Sqrt(10); got != want {
		t.Errorf("pow10Exact(0.5) = %v, want %v", got, want)
	}
}

// TestPriceSequence checks Beam's price formula, Math.round(Math.pow(10,
// nextDouble()*6)*100), over a million draws. The Java reference computed the
// same fold (h = h*1000003 + price) over new Random(12345) with Java 17's
// Math.pow; a 100-million-draw run of the same check also matched.
func TestPriceSequence(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		t.Skip("long")
	}
	r := NewJavaRandom(12345)
	var h int64
	for i := 0; i < n; i++ {
		h = h*1000003 + nextPrice(&r)
	}
	if want := int64(-8756545791811913147); h != want {
		t.Errorf("price hash = %d, want %d", h, want)
	}
}
