package lsm

import (
	"fmt"
	"os"
	"sync"
)

// The process's Env: every job and attempt a process runs shares one
// block cache and memtable budget, and finds the local copies of files
// its earlier attempts checkpointed.
var process struct {
	sync.Mutex
	env  *Env
	temp bool // its directory was made for it, and goes with it
}

// ProcessEnv returns the process's Env, made with cfg by the first call;
// later calls get the same Env whatever their cfg. An empty cfg.Dir makes
// a temporary directory, removed by CloseProcessEnv.
func ProcessEnv(cfg Config) (*Env, error) {
	process.Lock()
	defer process.Unlock()
	if process.env != nil {
		return process.env, nil
	}
	temp := false
	if cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "weir-state-")
		if err != nil {
			return nil, fmt.Errorf("lsm: local state directory: %w", err)
		}
		cfg.Dir, temp = dir, true
	}
	env, err := NewEnv(cfg)
	if err != nil {
		return nil, err
	}
	process.env, process.temp = env, temp
	return env, nil
}

// CurrentEnv returns the process's Env, nil if none was made.
func CurrentEnv() *Env {
	process.Lock()
	defer process.Unlock()
	return process.env
}

// CloseProcessEnv closes the process's Env, removing its directory if
// ProcessEnv made it. Stores must be closed first.
func CloseProcessEnv() {
	process.Lock()
	defer process.Unlock()
	if process.env == nil {
		return
	}
	process.env.Close()
	if process.temp {
		_ = os.RemoveAll(process.env.cfg.Dir)
	}
	process.env = nil
}
