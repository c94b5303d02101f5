package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/store"
)

// passiveCache is what a passive standby worker keeps loaded: per job run,
// the state of every subtask in its latest completed checkpoint.
type passiveCache struct {
	mu   sync.Mutex
	runs map[string]*cachedCheckpoint // by job run name
}

type cachedCheckpoint struct {
	id    uint64
	state map[dataflow.SubtaskID][]byte
}

// get returns the cached state of the given subtasks in checkpoint id of
// run name, if the cache holds that checkpoint.
func (c *passiveCache) get(name string, id uint64, want func(dataflow.SubtaskID) bool) (map[dataflow.SubtaskID][]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cc := c.runs[name]
	if cc == nil || cc.id != id {
		return nil, false
	}
	out := map[dataflow.SubtaskID][]byte{}
	for sid, b := range cc.state {
		if want(sid) {
			out[sid] = b
		}
	}
	return out, true
}

// prefetch loads the state of the checkpoint p names, replacing an older
// one of the same run. It runs on the agent's goroutines.
func (g *agent) prefetch(p *pb.Prefetch) {
	w := g.w
	var m store.Metadata
	if err := json.Unmarshal(p.Checkpoint, &m); err != nil || w.cfg.Program == nil {
		return
	}
	w.cache.mu.Lock()
	if cc := w.cache.runs[p.Name]; cc != nil && cc.id >= m.ID {
		w.cache.mu.Unlock()
		return
	}
	w.cache.mu.Unlock()
	pl, err := w.cfg.Program.Open(g.ctx, p.Job, p.Name, p.Args)
	if err != nil {
		return
	}
	cfg, err := pl.Compile(g.ctx)
	if err != nil || cfg.Store == nil {
		return
	}
	start := time.Now()
	state, err := engine.ReadState(g.ctx, cfg.Store, &m, cfg.Plan, nil, cfg.AllowNonRestoredState)
	if err != nil {
		w.cfg.Log(fmt.Sprintf("standby: loading checkpoint %d of %s: %v", m.ID, p.Name, err))
		return
	}
	n := 0
	for _, b := range state {
		n += len(b)
	}
	w.cache.mu.Lock()
	if cc := w.cache.runs[p.Name]; cc == nil || cc.id < m.ID {
		w.cache.runs[p.Name] = &cachedCheckpoint{id: m.ID, state: state}
	}
	w.cache.mu.Unlock()
	w.cfg.Log(fmt.Sprintf("standby: loaded checkpoint %d of %s, %d bytes in %v", m.ID, p.Name, n, time.Since(start).Round(time.Millisecond)))
	if lsmState := cfg.Runtime.State; lsmState != nil {
		// The pebble backend's state is in shared files the blobs only
		// name: fetch them, so that a restart placed here links them.
		var names []string
		for _, h := range m.Handles() {
			names = append(names, h.Shared...)
		}
		start := time.Now()
		env, err := lsmState.Env()
		if err != nil {
			w.cfg.Log(fmt.Sprintf("standby: fetching the state files of checkpoint %d of %s: %v", m.ID, p.Name, err))
			return
		}
		st, err := env.Prefetch(g.ctx, lsmState.Files, "standby/"+p.Name, names)
		if err != nil {
			w.cfg.Log(fmt.Sprintf("standby: fetching the state files of checkpoint %d of %s: %v", m.ID, p.Name, err))
			return
		}
		w.cfg.Log(fmt.Sprintf("standby: fetched %d state files of checkpoint %d of %s (%d bytes) in %v; %d were here",
			st.Downloaded, m.ID, p.Name, st.DownloadedBytes, time.Since(start).Round(time.Millisecond), len(names)-st.Downloaded))
	}
}

// restoreState returns the state of the local subtasks in checkpoint m:
// from the passive standby's cache when it holds m, else from the store.
func (a *workerAttempt) restoreState(ctx context.Context, cfg engine.Config, m *store.Metadata, local func(dataflow.SubtaskID) bool) (map[dataflow.SubtaskID][]byte, bool, error) {
	// The standby's memory holds the state at the layout of the plan the
	// job's arguments build, not at one a live rescale changed.
	if state, ok := a.g.w.cache.get(a.d.Name, m.ID, local); ok && !a.reshaped {
		return state, true, nil
	}
	state, err := engine.ReadState(ctx, cfg.Store, m, cfg.Plan, local, cfg.AllowNonRestoredState)
	return state, false, err
}

// Completed sends the metadata of completed checkpoint m to the passive
// standby workers, which load its state, and replaces lost active
// standbys from it.
func (x *remoteExecutor) Completed(m *store.Metadata) {
	if x.job == nil || m == nil {
		return
	}
	x.replaceStandbys(m)
	b, err := json.Marshal(m)
	if err != nil {
		return
	}
	c := x.c
	c.mu.Lock()
	var passive []*workerConn
	for _, w := range c.workers {
		if w.passive {
			passive = append(passive, w)
		}
	}
	c.mu.Unlock()
	for _, w := range passive {
		w.post(&pb.CoordinatorMessage{Msg: &pb.CoordinatorMessage_Prefetch{Prefetch: &pb.Prefetch{
			Name: x.job.id, Checkpoint: b, Job: x.job.job, Args: x.job.args}}})
	}
}
