package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/blob"
)

// RunRecord says which run of a job started last. Checkpoints belong to
// the run that took them (Metadata.Run); a fresh run replaces the record,
// a restored run continues the run it restores and leaves it alone. So a
// newest checkpoint whose run is not the recorded one was taken by an
// earlier run, and the latest run took none.
type RunRecord struct {
	Run           string `json:"run"`
	StartedMillis int64  `json:"started_ms"`
}

// Started returns when the run started.
func (r RunRecord) Started() time.Time { return time.UnixMilli(r.StartedMillis) }

// NewRunID returns a new random run name.
func NewRunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// StartRun records r as the latest run of job. A fresh run calls it
// before it takes its first checkpoint.
func (c *Checkpoints) StartRun(ctx context.Context, job string, r RunRecord) error {
	if err := checkJob(job); err != nil {
		return err
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := c.blobs.Put(ctx, runKey(job), data); err != nil {
		return fmt.Errorf("record run %s of job %q: %w", r.Run, job, err)
	}
	return nil
}

// LastRun returns the record of the latest run of job, and false if
// there is none (the job never ran with this store, or only with a weir
// that kept no record).
func (c *Checkpoints) LastRun(ctx context.Context, job string) (RunRecord, bool, error) {
	if err := checkJob(job); err != nil {
		return RunRecord{}, false, err
	}
	data, err := c.blobs.Get(ctx, runKey(job))
	if errors.Is(err, blob.ErrNotFound) {
		return RunRecord{}, false, nil
	}
	if err != nil {
		return RunRecord{}, false, fmt.Errorf("read the latest run of job %q: %w", job, err)
	}
	var r RunRecord
	if err := json.Unmarshal(data, &r); err != nil || r.Run == "" {
		return RunRecord{}, false, corrupt(runKey(job), "not a run record: %q", data)
	}
	return r, true, nil
}
