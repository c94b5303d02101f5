package task

import "testing"

func TestKeyGroupRangesPartitionAllGroups(t *testing.T) {
	for _, maxPar := range []int{1, 7, 128, 1000} {
		for n := 1; n <= min(maxPar, 33); n++ {
			next := 0
			for i := range n {
				start, end := KeyGroupRange(maxPar, n, i)
				if start != next || end <= start {
					t.Fatalf("max %d, n %d, subtask %d: range [%d,%d), want start %d and non-empty", maxPar, n, i, start, end, next)
				}
				for kg := start; kg < end; kg++ {
					if got := SubtaskForKeyGroup(maxPar, n, kg); got != i {
						t.Fatalf("max %d, n %d: key group %d maps to subtask %d, want %d", maxPar, n, kg, got, i)
					}
				}
				next = end
			}
			if next != maxPar {
				t.Fatalf("max %d, n %d: ranges end at %d", maxPar, n, next)
			}
		}
	}
}

// The key hash decides placement in every process, so its values are part
// of the format: changing them breaks restoring state across versions.
func TestKeyHashIsStable(t *testing.T) {
	cases := []struct {
		got, want uint64
	}{
		{HashString(""), HashBytes(nil)},
		{HashString("hello, world"), HashBytes([]byte("hello, world"))},
		{HashString("abcdefgh"), HashBytes([]byte("abcdefgh"))},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Fatalf("string and bytes hashes differ: %x vs %x", c.got, c.want)
		}
	}
	golden := []struct {
		key  string
		want uint64
	}{
		{"", 0x1ff5c2923a788d2c},
		{"a", 0x6e6fef6428e8c8bd},
		{"weir", 0xa0a19e606d7ba90c},
		{"a longer key than eight", 0x24d2908fb829b354},
	}
	for _, g := range golden {
		if got := HashString(g.key); got != g.want {
			t.Errorf("HashString(%q) = %#x, want %#x", g.key, got, g.want)
		}
	}
	if got, want := HashUint64(42), uint64(0x33c6590f898428d6); got != want {
		t.Errorf("HashUint64(42) = %#x, want %#x", got, want)
	}
}

func TestKeyGroupsSpreadEvenly(t *testing.T) {
	counts := make([]int, 128)
	for i := range 128000 {
		counts[KeyGroup(HashUint64(uint64(i)), 128)]++
	}
	for kg, c := range counts {
		if c < 800 || c > 1200 {
			t.Fatalf("key group %d got %d of 128000 sequential keys, want about 1000", kg, c)
		}
	}
}
