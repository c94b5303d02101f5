package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/store"
)

// backends runs test over each blob store implementation, so every test
// of this package holds for the in-memory and the directory store alike.
func backends(t *testing.T, test func(t *testing.T, blobs blob.Store)) {
	t.Helper()
	t.Run("memory", func(t *testing.T) { test(t, blob.Memory()) })
	t.Run("dir", func(t *testing.T) { test(t, blob.Dir(t.TempDir())) })
}

// The pipeline of every test checkpoint: vertex 0 with two subtasks,
// vertex 1 with one.
var (
	parallelism = map[int]int{0: 2, 1: 1}
	tasks       = []dataflow.SubtaskID{{Vertex: 0, Subtask: 0}, {Vertex: 0, Subtask: 1}, {Vertex: 1, Subtask: 0}}
)

func stateOf(id uint64, task dataflow.SubtaskID) []byte {
	return bytes.Repeat(fmt.Appendf(nil, "state of task %v in checkpoint %d;", task, id), 10)
}

// writeState writes every task's state for checkpoint id of job and
// returns the metadata that would commit it.
func writeState(t *testing.T, c *store.Checkpoints, job string, id uint64) store.Metadata {
	t.Helper()
	m := store.Metadata{
		Job:             job,
		ID:              id,
		TimestampMillis: 1_700_000_000_000 + int64(id),
		Fingerprint:     "pipeline-v1",
		Parallelism:     parallelism,
		Extra:           map[string]string{"writer": "test"},
	}
	for _, task := range tasks {
		h, err := c.WriteState(t.Context(), job, id, task, stateOf(id, task))
		if err != nil {
			t.Fatalf("WriteState(%s, %d, %v): %v", job, id, task, err)
		}
		m.Tasks = append(m.Tasks, store.TaskState{Task: task, Handles: []store.Handle{h}})
	}
	return m
}

// checkpoint writes and commits checkpoint id of job.
func checkpoint(t *testing.T, c *store.Checkpoints, job string, id uint64) store.Metadata {
	t.Helper()
	m := writeState(t, c, job, id)
	if err := c.Commit(t.Context(), m); err != nil {
		t.Fatalf("Commit(%s, %d): %v", job, id, err)
	}
	return m
}

// wantErr fails unless err wraps target and its message holds every
// string in says.
func wantErr(t *testing.T, err, target error, says ...string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want one wrapping %q", err, target)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
}

func wantCommitted(t *testing.T, c *store.Checkpoints, job string, want ...uint64) {
	t.Helper()
	got, err := c.Committed(t.Context(), job)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Committed = %v, want %v", got, want)
	}
}

func wantKeys(t *testing.T, blobs blob.Store, prefix string, want ...string) {
	t.Helper()
	got, err := blobs.List(t.Context(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("List(%q) =\n\t%s\nwant\n\t%s", prefix, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}
