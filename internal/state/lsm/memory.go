package lsm

import (
	"bufio"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// available returns the memory the process may use: the Go memory limit
// when one is set (GOMEMLIMIT or debug.SetMemoryLimit), else the memory
// the system reports available, else 4 GiB.
func available() int64 {
	if l := debug.SetMemoryLimit(-1); l > 0 && l < math.MaxInt64 {
		return l
	}
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 4 << 30
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemAvailable:" {
			if kb, err := strconv.ParseInt(fields[1], 10, 64); err == nil {
				return kb << 10
			}
		}
	}
	return 4 << 30
}

// defaults fills the zero sizes of cfg from the memory available: an
// eighth for the block cache (at most 1 GiB), a sixteenth for memtables
// (at most 256 MiB), both at least 8 MiB.
func (cfg *Config) defaults() {
	avail := available()
	if cfg.BlockCache <= 0 {
		cfg.BlockCache = min(max(avail/8, 8<<20), 1<<30)
	}
	if cfg.MemTables <= 0 {
		cfg.MemTables = min(max(avail/16, 8<<20), 256<<20)
	}
	if cfg.Stores <= 0 {
		cfg.Stores = 8
	}
	if cfg.Cache <= 0 {
		cfg.Cache = 1 << 14
	}
}
