package state

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkMapStateCheckpoint measures, per checkpoint interval, the
// operator's writes and the incremental snapshot of a table of maps that
// grow (a join's rows per key): 2,000 keys of 200 entries, and between two
// snapshots one new entry in each of 500 keys. "whole-maps" writes
// through the table of whole maps (each changed key's map copied on its
// first write after a snapshot and held whole in the delta, as MapState
// did before MapTable); "entries" through the MapTable (the delta holds
// the 500 new entries). It reports the bytes each delta uploads.
func BenchmarkMapStateCheckpoint(b *testing.B) {
	const keys, entries, written = 2000, 200, 500
	for _, mode := range []string{"whole-maps", "entries"} {
		b.Run(mode, func(b *testing.B) {
			files := newMemFiles()
			be := incBackend(files, [2]int{0, fixtureMaxPar})
			m := registerMaps(b, be)
			put := m.Put
			if mode == "whole-maps" {
				put = func(s int, k, uk int64, v string) {
					mp, ok := m.Table().GetMutable(s, k)
					if !ok {
						m.Table().PutNew(s, k, map[int64]string{uk: v})
						return
					}
					mp[uk] = v
				}
			}
			for k := range int64(keys) {
				for uk := range int64(entries) {
					put(be.Shard(fixtureKG(k)), k, uk, "a row of the join's state, some tens of bytes long")
				}
			}
			snap(b, be)
			rng := rand.New(rand.NewPCG(1, 2))
			next := int64(entries)
			before := files.bytes
			for b.Loop() {
				for range written {
					k := rng.Int64N(keys)
					put(be.Shard(fixtureKG(k)), k, next, "a row of the join's state, some tens of bytes long")
					next++
				}
				snap(b, be)
			}
			b.ReportMetric(float64(files.bytes-before)/float64(b.N), "uploaded-B/op")
		})
	}
}
