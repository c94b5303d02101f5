package task

import (
	"errors"
	"fmt"

	"github.com/weir-stream/weir/internal/state/lsm"
)

// LSMState is what the pebble state backend needs from the runtime: the
// worker's environment of stores (shared block cache, memtable budget,
// local copies of checkpointed files) and the job's shared files in its
// checkpoint store, where incremental checkpoints upload table files.
type LSMState struct {
	// Config sizes the process's Env, made when the first store opens.
	Config lsm.Config
	Files  lsm.Files
}

// MemoryState is what the memory state backend needs from the runtime
// for incremental checkpoints (state.Incremental): the job's shared files
// in its checkpoint store, and the size of a table from which its
// checkpoints are incremental.
type MemoryState struct {
	Files lsm.Files
	// From is state.Incremental.From.
	From int64
}

// Env returns the process's Env, made with s.Config if there is none
// (lsm.ProcessEnv).
func (s *LSMState) Env() (*lsm.Env, error) { return lsm.ProcessEnv(s.Config) }

// Settler is implemented by operators whose state caches entries in
// memory in front of an LSM store. Settle is called on the task goroutine
// between batches of input, when no record is being processed and no
// reference into state is held, so that the operator may write its
// changes through and forget what it cached.
type Settler interface {
	Settle() error
}

// settle calls Settle on the chain's operators that have state in front
// of a store.
func (s *subtask) settle() error {
	if s.tctx.State == nil {
		return nil
	}
	for i, op := range s.ops {
		if st, ok := op.(Settler); ok {
			if err := st.Settle(); err != nil {
				return fmt.Errorf("%q: %w", s.v.Chain[i].Name, err)
			}
		}
	}
	return nil
}

// CorruptState is the failure of a subtask whose restored state failed
// verification when it opened (an LSM store's files): the engine marks
// the checkpoint unusable and restores an older one, as it does when a
// state blob fails its checksum.
type CorruptState struct {
	// Checkpoint is the checkpoint the subtask restored.
	Checkpoint int64
	Err        error
}

func (c *CorruptState) Error() string { return c.Err.Error() }
func (c *CorruptState) Unwrap() error { return c.Err }

// corruptRestore returns err as a CorruptState when it says the restored
// state failed verification.
func (s *subtask) corruptRestore(err error) error {
	if s.tctx.Restored > 0 && errors.Is(err, lsm.ErrCorrupt) {
		return &CorruptState{Checkpoint: s.tctx.Restored, Err: fmt.Errorf("restoring checkpoint %d: %w", s.tctx.Restored, err)}
	}
	return err
}
