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
	env   *Env
	temp  bool // its directory was made for it, and goes with it
	users int  // Enter without Leave
}

// Enter counts a user of the process's Env: a job run in this process,
// or a worker for its lifetime. Leave ends it; when the last user leaves,
// the Env closes (CloseProcessEnv), so that a temporary directory does
// not outlive the runs that needed it, while a worker's Env lives as long
// as the worker, for the local copies its restarts find.
func Enter() {
	process.Lock()
	process.users++
	process.Unlock()
}

// Leave ends what Enter began.
func Leave() {
	process.Lock()
	process.users--
	last := process.users <= 0
	process.Unlock()
	if last {
		CloseProcessEnv()
	}
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
// ProcessEnv made it. Stores must be closed first. An Env entered by a
// user who has not left stays.
func CloseProcessEnv() {
	process.Lock()
	defer process.Unlock()
	if process.env == nil || process.users > 0 {
		return
	}
	process.env.Close()
	if process.temp {
		_ = os.RemoveAll(process.env.cfg.Dir)
	}
	process.env = nil
}
