package task

import (
	"encoding/binary"
	"math/bits"
)

// The key hash decides which subtask owns a key, so it must be the same in
// every process and on every machine: no per-process seeds (hash/maphash is
// out), fixed byte order.

const (
	m1 = 0xa0761d6478bd642f
	m2 = 0xe7037ed1a0b428db
	m3 = 0x8ebc6af09c88c6e3
)

func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// HashUint64 hashes an integer key.
func HashUint64(v uint64) uint64 {
	return mix(v^m1, m2^0x9e3779b97f4a7c15)
}

// HashBytes hashes a byte key.
func HashBytes(b []byte) uint64 {
	h := uint64(len(b)) ^ m1
	for len(b) >= 8 {
		h = mix(h^binary.LittleEndian.Uint64(b), m2)
		b = b[8:]
	}
	if len(b) > 0 {
		var v uint64 // the tail, little-endian, zero-padded
		for i := len(b) - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
		h = mix(h^v, m3)
	}
	return mix(h, m2)
}

// HashString hashes a string key; it equals HashBytes of its bytes.
func HashString(s string) uint64 {
	h := uint64(len(s)) ^ m1
	for len(s) >= 8 {
		v := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		h = mix(h^v, m2)
		s = s[8:]
	}
	if len(s) > 0 {
		var v uint64
		for i := 0; i < len(s); i++ {
			v |= uint64(s[i]) << (8 * i)
		}
		h = mix(h^v, m3)
	}
	return mix(h, m2)
}

// KeyGroup maps a key hash to one of maxPar key groups: hash mod maxPar,
// by a mask when maxPar is a power of two (the default 128), which is the
// same and cheaper than a division on every record.
func KeyGroup(hash uint64, maxPar int) int {
	if m := uint64(maxPar); m&(m-1) == 0 {
		return int(hash & (m - 1))
	}
	return int(hash % uint64(maxPar))
}
