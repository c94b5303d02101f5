package cluster_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-stream/weir/cli/jobs"
	"github.com/weir-stream/weir/connector"
)

// holdingSource is a source whose subtask 0 (with every, each of its two
// subtasks), once armed, blocks in Read until released and then fails,
// once. While it blocks it injects no barrier, so no checkpoint
// triggered meanwhile completes.
type holdingSource struct {
	connector.Source[jobs.KeyEvent]
	every   bool
	armed   atomic.Bool
	fired   [2]atomic.Bool
	held    chan struct{} // closed once a subtask blocks
	once    sync.Once
	release chan struct{} // closed by the test
}

func newHoldingSource(every bool) *holdingSource {
	return &holdingSource{every: every, held: make(chan struct{}), release: make(chan struct{})}
}

func (s *holdingSource) Open(ctx context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[jobs.KeyEvent], error) {
	r, err := s.Source.Open(ctx, info, pos)
	if err != nil || info.Subtask >= len(s.fired) || info.Subtask != 0 && !s.every {
		return r, err
	}
	return &holdingReader{Reader: r, s: s, fired: &s.fired[info.Subtask]}, nil
}

type holdingReader struct {
	connector.Reader[jobs.KeyEvent]
	s     *holdingSource
	fired *atomic.Bool
}

func (r *holdingReader) Read(ctx context.Context, buf []jobs.KeyEvent) (int, error) {
	if r.s.armed.Load() && r.fired.CompareAndSwap(false, true) {
		r.s.once.Do(func() { close(r.s.held) })
		select {
		case <-r.s.release:
			return 0, errors.New("the test failed the source")
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return r.Reader.Read(ctx, buf)
}

// waitHeld waits until a subtask of the source blocked.
func (s *holdingSource) waitHeld(t *testing.T) {
	t.Helper()
	select {
	case <-s.held:
	case <-time.After(time.Minute): // a hang, not a timing assertion
		buf := make([]byte, 1<<20)
		t.Fatalf("the source never read again; goroutines:\n%s", buf[:runtime.Stack(buf, true)])
	}
}

// Under fine-grained failover a failed subtask restarts in place, on its
// live worker, from the latest completed checkpoint. When that
// checkpoint's state is corrupt, the restart fails the worker's share as
// a corrupt checkpoint: the coordinator marks the checkpoint unusable and
// rolls the job back from the checkpoint before, and the output is the
// one-process run's.
func TestClusterFallsBackWhenARestartInPlaceFindsItsCheckpointCorrupt(t *testing.T) {
	hs := newHoldingSource(false)
	var job, corrupt string
	logs, _ := loseAWorker{
		source: func(s connector.Source[jobs.KeyEvent]) connector.Source[jobs.KeyEvent] {
			hs.Source = s
			return hs
		},
		// A checkpoint triggered just before the source blocked may wait
		// for its barrier: the timeout ends it, so that the next one is
		// triggered.
		timeout: 2 * time.Second,
		script: func(t *testing.T, c *windowsCluster) {
			job = c.job
			logs := c.logs
			logs.waitCount(t, "^"+job+": checkpoint [0-9]+ completed", 2)
			hs.armed.Store(true)
			hs.waitHeld(t)
			// Once a checkpoint is triggered after the source blocked, the
			// one before it has ended (one at a time) and this one cannot
			// complete: the newest completed checkpoint stays the newest.
			triggered := "^" + job + ": checkpoint [0-9]+ triggered"
			logs.waitCount(t, triggered, logs.count(triggered)+1)
			chk := newestCheckpoint(t, filepath.Join(c.prog.store, "jobs", job))
			corrupt = strings.TrimLeft(strings.TrimPrefix(filepath.Base(chk), "chk-"), "0")
			blobs, _ := filepath.Glob(filepath.Join(chk, "state", "*"))
			if len(blobs) == 0 {
				t.Fatalf("checkpoint %s has no state blobs", chk)
			}
			for _, b := range blobs {
				data, err := os.ReadFile(b)
				if err != nil || len(data) == 0 {
					t.Fatalf("reading %s: %v", b, err)
				}
				data[len(data)/2] ^= 0x01
				if err := os.WriteFile(b, data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			close(hs.release)
		},
	}.run(t)
	logs.wait(t, "^"+job+": failure 1: .*the test failed the source; restarting [0-9]+ of [0-9]+ subtasks .* from checkpoint "+corrupt+"; the others run on")
	logs.wait(t, "^"+job+": checkpoint "+corrupt+" is unusable: on worker w[12]: restarting subtasks: restoring checkpoint "+corrupt+": .*checksum mismatch.*; restoring checkpoint [0-9]+ instead")
}

// newestCheckpoint returns the directory of the newest committed
// checkpoint in a job's directory of the store.
func newestCheckpoint(t *testing.T, dir string) string {
	t.Helper()
	metas, _ := filepath.Glob(filepath.Join(dir, "chk-*", "_metadata"))
	if len(metas) == 0 {
		t.Fatalf("no committed checkpoint in %s", dir)
	}
	return filepath.Dir(metas[len(metas)-1]) // zero-padded ids sort by name
}
