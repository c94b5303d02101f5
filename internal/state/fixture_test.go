package state

import (
	"testing"

	"github.com/weir-stream/weir/codec"
)

// keyedParts are the parts the restore and adoption tests register: a
// keyed table, a sharded one whose keys do not tell their key group, an
// unsharded one and keyed timers.
type keyedParts struct {
	keyed, sharded, single *Table[int64, int64]
	timers                 *Timers[int64]
}

const fixtureMaxPar = 8

func fixtureKG(k int64) int { return int(k % fixtureMaxPar) }

func registerKeyedParts(t *testing.T, b *Backend) keyedParts {
	t.Helper()
	ic := codec.Int64()
	keyed, err := Register(b, "keyed", TableOptions[int64, int64]{Key: ic, Value: ic, KeyGroup: fixtureKG})
	if err != nil {
		t.Fatal(err)
	}
	sharded, err := Register(b, "sharded", TableOptions[int64, int64]{Key: ic, Value: ic, Sharded: true})
	if err != nil {
		t.Fatal(err)
	}
	single, err := Register(b, "single", TableOptions[int64, int64]{Key: ic, Value: ic})
	if err != nil {
		t.Fatal(err)
	}
	timers, err := RegisterTimers(b, "timers", ic, fixtureKG)
	if err != nil {
		t.Fatal(err)
	}
	return keyedParts{keyed, sharded, single, timers}
}

// fixtureRanges returns the key-group ranges of n subtasks.
func fixtureRanges(n int) [][2]int {
	var out [][2]int
	for i := range n {
		out = append(out, [2]int{(i*fixtureMaxPar + n - 1) / n, ((i+1)*fixtureMaxPar + n - 1) / n})
	}
	return out
}

// countOwned counts into keyed, sharded and timers the entries and
// timers of p, the parts of a backend of key groups r filled from
// snapshots or adoptions of backends that held keys 0..39 (keyed k=100+k,
// sharded -k=200+k, a timer at k for k); it reports an entry or timer
// outside r or of another value. It pops p's timers.
func countOwned(t *testing.T, how string, r [2]int, p keyedParts, keyed, sharded, timers map[int64]int) {
	t.Helper()
	for s := range p.keyed.Shards() {
		p.keyed.All(s, func(k, v int64) bool {
			if g := fixtureKG(k); g < r[0] || g >= r[1] || v != 100+k {
				t.Errorf("backend %v %s keyed %d=%d", r, how, k, v)
			}
			keyed[k]++
			return true
		})
		p.sharded.All(s, func(k, v int64) bool {
			if g := fixtureKG(-k); g != r[0]+s || v != 200-k {
				t.Errorf("backend %v %s sharded %d=%d in shard %d", r, how, k, v, s)
			}
			sharded[-k]++
			return true
		})
	}
	for {
		_, k, ok := p.timers.PopDue(1 << 40)
		if !ok {
			break
		}
		if g := fixtureKG(k); g < r[0] || g >= r[1] {
			t.Errorf("backend %v %s the timer of key %d", r, how, k)
		}
		timers[k]++
	}
}
