package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/store"
)

func TestACommittedCheckpointLoadsAsWritten(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		c := store.New(blobs)
		want := checkpoint(t, c, "wc", 17)
		wantKeys(t, blobs, "",
			"jobs/wc/chk-000000000017/_metadata",
			"jobs/wc/chk-000000000017/state/0-0",
			"jobs/wc/chk-000000000017/state/0-1",
			"jobs/wc/chk-000000000017/state/1-0")

		got, err := c.Load(t.Context(), "wc", 17)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Load =\n%+v\nwant\n%+v", got, want)
		}
		for _, ts := range got.Tasks {
			data, err := c.ReadState(t.Context(), ts.Handles[0])
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(data, stateOf(17, ts.Task)) {
				t.Errorf("state of %v = %q, want what the task wrote", ts.Task, data)
			}
		}
		latest, skipped, err := c.Latest(t.Context(), "wc")
		if err != nil || latest.ID != 17 || len(skipped) != 0 {
			t.Fatalf("Latest = checkpoint %d, skipped %v, %v; want 17, none, nil", latest.ID, skipped, err)
		}
	})
}

func TestJobsDoNotSeeEachOthersCheckpoints(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		c := store.New(blobs)
		checkpoint(t, c, "a", 1)
		checkpoint(t, c, "ab", 2)
		wantCommitted(t, c, "a", 1)
		wantCommitted(t, c, "ab", 2)
	})
}

func TestLoadPathAcceptsWhatTheUserPastes(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		c := store.New(blobs)
		checkpoint(t, c, "wc", 17)
		for _, path := range []string{
			"jobs/wc/chk-000000000017/_metadata",
			"jobs/wc/chk-000000000017",
			"jobs/wc/chk-000000000017/",
			"jobs/wc/chk-17",
			"/var/lib/weir/jobs/wc/chk-000000000017/_metadata",
			"s3://bucket/weir/jobs/wc/chk-17/",
		} {
			m, err := c.LoadPath(t.Context(), path)
			if err != nil || m.Job != "wc" || m.ID != 17 {
				t.Errorf("LoadPath(%q) = %s/%d, %v; want wc/17", path, m.Job, m.ID, err)
			}
		}
		_, err := c.LoadPath(t.Context(), "jobs/wc/chk-18")
		wantErr(t, err, blob.ErrNotFound, "jobs/wc/chk-000000000018/_metadata")
	})
}

func TestParsePathRejectsWhatIsNotACheckpoint(t *testing.T) {
	for _, path := range []string{"", "wc/chk-1", "jobs/wc", "jobs/wc/chk-", "jobs/wc/chk-x1", "jobs/wc/state/0-0", "jobs/../chk-1", "x/jobs/wc/chk-1/state/0-0"} {
		if job, id, err := store.ParsePath(path); err == nil {
			t.Errorf("ParsePath(%q) = %q, %d; want an error", path, job, id)
		}
	}
}

func TestCorruptMetadataIsDetected(t *testing.T) {
	const key = "jobs/wc/chk-000000000003/_metadata"
	for _, tc := range []struct {
		name   string
		action blob.Action
		says   string
	}{
		{"a flipped body byte", blob.Corrupt(40), "checksum mismatch"},
		{"a flipped checksum byte", blob.Corrupt(13), "checksum mismatch"},
		{"a flipped length byte", blob.Corrupt(9), "length mismatch"},
		{"a flipped magic byte", blob.Corrupt(0), "bad magic"},
		{"a flipped version byte", blob.Corrupt(7), "unknown format version"},
		{"truncation in the body", blob.Truncate(30), "length mismatch (truncated?)"},
		{"truncation in the header", blob.Truncate(10), "truncated: 10 bytes"},
		{"an empty blob", blob.Truncate(0), "truncated: 0 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			backends(t, func(t *testing.T, blobs blob.Store) {
				faulty := blob.Faulty(blobs, blob.Plan{{Op: blob.OpPutIfAbsent, Prefix: key, Action: tc.action}})
				checkpoint(t, store.New(faulty), "wc", 3)
				_, err := store.New(blobs).Load(t.Context(), "wc", 3)
				wantErr(t, err, store.ErrCorrupt, key, tc.says)
			})
		})
	}
}

func TestMetadataWithTrailingBytesOrInTheWrongPlaceIsCorrupt(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		c := store.New(blobs)
		checkpoint(t, c, "wc", 1)
		data, err := blobs.Get(t.Context(), "jobs/wc/chk-000000000001/_metadata")
		if err != nil {
			t.Fatal(err)
		}
		if err := blobs.Put(t.Context(), "jobs/wc/chk-000000000002/_metadata", data); err != nil {
			t.Fatal(err)
		}
		_, err = c.Load(t.Context(), "wc", 2)
		wantErr(t, err, store.ErrCorrupt, "chk-000000000002/_metadata", `holds checkpoint 1 of job "wc"`)

		if err := blobs.Put(t.Context(), "jobs/wc/chk-000000000001/_metadata", append(data, '\n')); err != nil {
			t.Fatal(err)
		}
		_, err = c.Load(t.Context(), "wc", 1)
		wantErr(t, err, store.ErrCorrupt, "chk-000000000001/_metadata", "length mismatch")
	})
}

func TestCorruptStateIsDetected(t *testing.T) {
	const key = "jobs/wc/chk-000000000005/state/0-1"
	for _, tc := range []struct {
		name   string
		action blob.Action
		says   string
	}{
		{"a flipped byte", blob.Corrupt(7), "checksum mismatch"},
		{"a truncated write", blob.Truncate(20), "size 20, handle says"},
		{"a lost write", blob.Truncate(0), "size 0, handle says"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			backends(t, func(t *testing.T, blobs blob.Store) {
				faulty := blob.Faulty(blobs, blob.Plan{{Op: blob.OpPut, Prefix: key, Action: tc.action}})
				m := checkpoint(t, store.New(faulty), "wc", 5)
				c := store.New(blobs)
				_, err := c.ReadState(t.Context(), m.Tasks[1].Handles[0])
				wantErr(t, err, store.ErrCorrupt, key, tc.says)
				_, err = c.ReadState(t.Context(), m.Tasks[0].Handles[0])
				if err != nil {
					t.Errorf("ReadState of an intact blob: %v", err)
				}
			})
		})
	}
}

func TestReadStateOfAMissingBlobIsCorrupt(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		c := store.New(blobs)
		m := checkpoint(t, c, "wc", 1)
		h := m.Tasks[2].Handles[0]
		if err := blobs.Delete(t.Context(), h.Key); err != nil {
			t.Fatal(err)
		}
		_, err := c.ReadState(t.Context(), h)
		wantErr(t, err, store.ErrCorrupt, h.Key, "state blob is missing")
	})
}

func TestLatestSkipsACorruptNewestCheckpoint(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		faulty := blob.Faulty(blobs, blob.Plan{{Op: blob.OpPutIfAbsent, Nth: 3, Action: blob.Corrupt(50)}})
		c := store.New(faulty)
		for id := uint64(1); id <= 3; id++ {
			checkpoint(t, c, "wc", id)
		}
		m, skipped, err := c.Latest(t.Context(), "wc")
		if err != nil || m.ID != 2 {
			t.Fatalf("Latest = %d, %v; want checkpoint 2", m.ID, err)
		}
		if len(skipped) != 1 || skipped[0].ID != 3 {
			t.Fatalf("skipped %v, want checkpoint 3", skipped)
		}
		wantErr(t, skipped[0].Err, store.ErrCorrupt, "jobs/wc/chk-000000000003/_metadata", "checksum mismatch")
		t.Logf("%v, restoring %d", skipped[0], m.ID)
	})
}

func TestLatestSkipsANewestCheckpointMissingAStateBlob(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		c := store.New(blobs)
		checkpoint(t, c, "wc", 1)
		checkpoint(t, c, "wc", 2)
		checkpoint(t, c, "wc", 3)
		if err := blobs.Delete(t.Context(), "jobs/wc/chk-000000000003/state/1-0"); err != nil {
			t.Fatal(err)
		}
		// A write that silently lost its tail, caught by size alone.
		if err := blobs.Put(t.Context(), "jobs/wc/chk-000000000002/state/0-0", []byte("short")); err != nil {
			t.Fatal(err)
		}
		m, skipped, err := c.Latest(t.Context(), "wc")
		if err != nil || m.ID != 1 {
			t.Fatalf("Latest = %d, %v; want checkpoint 1", m.ID, err)
		}
		if len(skipped) != 2 || skipped[0].ID != 3 || skipped[1].ID != 2 {
			t.Fatalf("skipped %v, want 3 then 2", skipped)
		}
		wantErr(t, skipped[0].Err, store.ErrCorrupt, "jobs/wc/chk-000000000003/state/1-0", "missing")
		wantErr(t, skipped[1].Err, store.ErrCorrupt, "jobs/wc/chk-000000000002/state/0-0", "size 5, handle says")
	})
}

func TestLatestIgnoresCheckpointsWithoutMetadata(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		c := store.New(blobs)
		checkpoint(t, c, "wc", 1)
		writeState(t, c, "wc", 2) // aborted or still in flight
		m, skipped, err := c.Latest(t.Context(), "wc")
		if err != nil || m.ID != 1 || len(skipped) != 0 {
			t.Fatalf("Latest = %d, skipped %v, %v; want 1, none, nil", m.ID, skipped, err)
		}
	})
}

func TestLatestWithNothingUsableSaysWhy(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		c := store.New(blobs)
		_, skipped, err := c.Latest(t.Context(), "wc")
		wantErr(t, err, store.ErrNoCheckpoint, `job "wc"`)
		if len(skipped) != 0 {
			t.Errorf("skipped %v in an empty store", skipped)
		}

		faulty := blob.Faulty(blobs, blob.Plan{{Op: blob.OpPutIfAbsent, Action: blob.Truncate(20)}})
		checkpoint(t, store.New(faulty), "wc", 1)
		_, skipped, err = c.Latest(t.Context(), "wc")
		wantErr(t, err, store.ErrNoCheckpoint)
		if len(skipped) != 1 || skipped[0].ID != 1 {
			t.Errorf("skipped %v, want checkpoint 1", skipped)
		}
	})
}

func TestLatestDoesNotFallBackOnATransientError(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		down := errors.New("connection reset")
		faulty := blob.Faulty(blobs, blob.Plan{{Op: blob.OpGet, Nth: 1, Action: blob.Fail(down)}})
		c := store.New(faulty)
		checkpoint(t, c, "wc", 1)
		checkpoint(t, c, "wc", 2)
		m, _, err := c.Latest(t.Context(), "wc")
		if !errors.Is(err, down) || errors.Is(err, store.ErrNoCheckpoint) {
			t.Fatalf("Latest = checkpoint %d, %v; want the store's error", m.ID, err)
		}
		if m, _, err := c.Latest(t.Context(), "wc"); err != nil || m.ID != 2 {
			t.Fatalf("Latest after the store recovered = %d, %v; want 2", m.ID, err)
		}
	})
}

func TestASecondCommitOfTheSameCheckpointIsStale(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		c := store.New(blobs)
		first := checkpoint(t, c, "wc", 7)
		second := first
		second.Fingerprint = "written by a stale coordinator"
		err := c.Commit(t.Context(), second)
		wantErr(t, err, store.ErrStale, "jobs/wc/chk-000000000007/_metadata")
		got, err := c.Load(t.Context(), "wc", 7)
		if err != nil || got.Fingerprint != first.Fingerprint {
			t.Fatalf("Load = fingerprint %q, %v; want the first commit's", got.Fingerprint, err)
		}
	})
}

func TestConcurrentCommitsOfOneCheckpointHaveOneWinner(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		c := store.New(blobs)
		m := writeState(t, c, "wc", 9)
		const coordinators = 8
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			wins []string
		)
		for i := range coordinators {
			wg.Go(func() {
				m := m
				m.Fingerprint = fmt.Sprintf("coordinator %d", i)
				err := c.Commit(t.Context(), m)
				switch {
				case err == nil:
					mu.Lock()
					wins = append(wins, m.Fingerprint)
					mu.Unlock()
				case !errors.Is(err, store.ErrStale):
					t.Errorf("Commit: %v, want nil or ErrStale", err)
				}
			})
		}
		wg.Wait()
		if len(wins) != 1 {
			t.Fatalf("%d commits succeeded (%q), want 1", len(wins), wins)
		}
		got, err := c.Load(t.Context(), "wc", 9)
		if err != nil || got.Fingerprint != wins[0] {
			t.Fatalf("Load = %q, %v; want the winner %q", got.Fingerprint, err, wins[0])
		}
	})
}

func TestCommitRefusesInconsistentMetadata(t *testing.T) {
	backends(t, func(t *testing.T, blobs blob.Store) {
		c := store.New(blobs)
		base := writeState(t, c, "wc", 1)
		for name, change := range map[string]func(m *store.Metadata){
			"a job name with a slash": func(m *store.Metadata) { m.Job = "a/b" },
			"a subtask out of range":  func(m *store.Metadata) { m.Tasks[2].Task.Subtask = 1 },
			"an unknown vertex":       func(m *store.Metadata) { m.Tasks[0].Task.Vertex = 9 },
			"a task listed twice":     func(m *store.Metadata) { m.Tasks[1].Task = m.Tasks[0].Task },
			"a handle with a bad key": func(m *store.Metadata) { m.Tasks[0].Handles[0].Key = "../x" },
			"a parallelism of zero":   func(m *store.Metadata) { m.Parallelism = map[int]int{0: 2, 1: 0} },
		} {
			m := base
			m.Tasks = append([]store.TaskState(nil), base.Tasks...)
			for i := range m.Tasks {
				m.Tasks[i].Handles = append([]store.Handle(nil), m.Tasks[i].Handles...)
			}
			change(&m)
			if err := c.Commit(t.Context(), m); err == nil {
				t.Errorf("Commit of metadata with %s succeeded", name)
			}
		}
		wantCommitted(t, c, "wc")
	})
}

func TestBadJobNamesAreRejected(t *testing.T) {
	c := store.New(blob.Memory())
	for _, job := range []string{"", "a/b", "..", ".hidden"} {
		if _, err := c.WriteState(t.Context(), job, 1, tasks[0], nil); err == nil {
			t.Errorf("WriteState for job %q succeeded", job)
		}
		if _, err := c.Load(t.Context(), job, 1); err == nil {
			t.Errorf("Load for job %q succeeded", job)
		}
	}
}
