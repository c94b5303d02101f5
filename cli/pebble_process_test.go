package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	weirapi "github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/store"
)

// A job under the pebble backend, killed with SIGKILL, restores in
// another process from the files in the store. A shared file of the
// newest checkpoint with a flipped byte fails its checksum on download:
// the restore says so, marks the checkpoint unusable and restores the one
// before, and the output is exactly-once.
func TestPebbleRestoreFallsBackFromAFlippedByteInASharedFile(t *testing.T) {
	dir := t.TempDir()
	job := []string{"run", "keycount", "--events", "300000", "--keys", "5000", "--window", "100ms", "-p", "2", "--progress", "off"}
	ref := filepath.Join(dir, "ref")
	if code, _, stderr := weir(t, append(job, "--output", ref)...); code != 0 {
		t.Fatalf("reference run: exit %d\n%s", code, stderr)
	}
	out, state := filepath.Join(dir, "out"), filepath.Join(dir, "state")
	ft := []string{"--guarantee", "exactly-once", "--checkpoint-interval", "50ms", "--state-dir", state, "--output", out,
		"--state-backend", "pebble", "--state-local-dir", filepath.Join(dir, "local")}
	killAfter(t, "checkpoint 4 completed", append(append(job, ft...), "--rate", "150000", "--log-checkpoints")...)

	ctx := context.Background()
	blobs, err := blob.Open(ctx, state)
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(blobs)
	ids, err := st.Committed(ctx, "keycount")
	if err != nil || len(ids) < 2 {
		t.Fatalf("want at least 2 retained checkpoints, got %v (%v)", ids, err)
	}
	newest, prev := ids[len(ids)-1], ids[len(ids)-2]
	shared := func(id uint64) map[string]bool {
		m, err := st.Load(ctx, "keycount", id)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, h := range m.Handles() {
			for _, n := range h.Shared {
				out[n] = true
			}
		}
		return out
	}
	older := shared(prev)
	var flip string
	for n := range shared(newest) {
		if !older[n] {
			flip = n
			break
		}
	}
	if flip == "" {
		t.Fatalf("checkpoint %d names no shared file that checkpoint %d does not", newest, prev)
	}
	path := filepath.Join(state, "jobs", "keycount", "shared", flip)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x40
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}

	// Another local directory: the killed process's local copies are
	// intact, and a restore that found them would not read the store.
	ft[len(ft)-1] = filepath.Join(dir, "local2")
	code, _, stderr := weir(t, append(append(job, ft...), "--restore", "latest")...)
	id := strconv.FormatUint(newest, 10)
	if code != 0 || !strings.Contains(stderr, "checkpoint "+id+" is unusable") || !strings.Contains(stderr, "checksum mismatch") ||
		!strings.Contains(stderr, "instead") {
		t.Fatalf("restore with a flipped byte in shared file %s of checkpoint %s: exit %d, want a fallback that says why\n%s", flip, id, code, stderr)
	}
	if err := cli.VerifyLines(weirapi.ExactlyOnce, lines(t, ref), lines(t, out)); err != nil {
		t.Fatalf("output after the fallback is not exactly-once: %v\n%s", err, stderr)
	}
}

// With the pebble backend a job keeps keyed state five times the
// process's memory limit (GOMEMLIMIT, from which the block cache and
// memtables take their default sizes) and runs to the end, exactly-once
// through an injected failure: every key's value reads back as written,
// every key's row is written once, and the process's peak resident set
// stays below the state's size, so the state cannot have been in memory.
func TestPebbleKeepsStateLargerThanTheMemoryLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 256 MB of state")
	}
	const keys, size, limit = 1_000_000, 256, 48 << 20
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	cmd := exec.Command(weirBinary(t), "run", "largestate", "--keys", strconv.Itoa(keys), "--value-bytes", strconv.Itoa(size), "-p", "2",
		"--progress", "off", "--output", out, "--state-backend", "pebble", "--state-local-dir", filepath.Join(dir, "local"),
		"--guarantee", "exactly-once", "--state-dir", filepath.Join(dir, "state"), "--checkpoint-interval", "1s",
		"--inject-failures", "1", "--failure-seed", "3")
	cmd.Env = append(os.Environ(), "GOMEMLIMIT="+strconv.Itoa(limit))
	res, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("largestate: %v\n%s", err, res)
	}
	if !strings.Contains(string(res), "1 failures injected") {
		t.Fatalf("no failure was injected:\n%s", res)
	}
	rows := lines(t, out)
	seen := make(map[int64]bool, keys)
	for _, l := range rows {
		var r struct{ Key int64 }
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if seen[r.Key] {
			t.Fatalf("key %d written twice", r.Key)
		}
		seen[r.Key] = true
	}
	if len(seen) != keys {
		t.Fatalf("%d keys written, want %d", len(seen), keys)
	}
	state := int64(keys * size)
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	if rss >= state {
		t.Fatalf("peak resident set %d MB with %d MB of state and a %d MB memory limit: the state may have been in memory", rss>>20, state>>20, limit>>20)
	}
	t.Logf("%d MB of keyed state, memory limit %d MB, peak resident set %d MB", state>>20, limit>>20, rss>>20)
}
