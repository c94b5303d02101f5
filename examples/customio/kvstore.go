package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/weir-stream/weir/connector"
)

// Entry sets Key to Value in a key-value store.
type Entry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// KVSink returns a sink that keeps the latest value of each key in
// directory dir, one file per key: the value of key k is the content of
// dir/<k, path-escaped>.value, replaced atomically (written aside and
// renamed) when it changes. ReadStore reads the store back. Keys must
// escape to file names the file system accepts (about 200 bytes).
//
// Without checkpoints a writer applies its entries to the store at every
// Flush and at Close.
//
// With checkpoints it commits with them (connector.Committer), so the
// store only ever shows the values of completed checkpoints: a writer
// keeps the entries of the current checkpoint interval in memory (the
// last value of each key); at the checkpoint barrier (PreCommit) it
// writes them to a pending transaction file,
// dir/.txn-<subtask>-<checkpoint>-<writer>.pending, synced to disk, whose
// name is the transaction the checkpoint records; when the checkpoint
// completes (Commit) it applies the file's entries to the store and
// deletes the file. A transaction file that is gone was committed
// before, so committing again changes nothing. Recover commits the
// restored checkpoint's transactions and deletes every other transaction
// file of the subtask: entries written after the restored checkpoint
// never reach the store.
//
// Open creates dir if it is missing.
func KVSink(dir string) connector.Sink[Entry] { return kvSink{dir: dir} }

type kvSink struct{ dir string }

func (s kvSink) Open(_ context.Context, info connector.SubtaskInfo) (connector.Writer[Entry], error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	if s.dir == "" {
		return nil, connector.ConfigError(errors.New("kvstore: the store directory is empty"))
	}
	if err := os.MkdirAll(s.dir, 0o777); err != nil {
		return nil, connector.ConfigError(fmt.Errorf("kvstore: store directory: %w", err))
	}
	return &kvWriter{dir: s.dir, info: info, id: fmt.Sprintf("%016x", rand.Uint64()), pending: map[string]string{}}, nil
}

// kvWriter writes one subtask's entries.
type kvWriter struct {
	dir     string
	info    connector.SubtaskInfo
	id      string            // random, in the names of the writer's transaction files
	txn     bool              // with checkpoints: after Recover
	pending map[string]string // entries not yet applied or pre-committed
}

// Write takes the batch's entries; the last value of a key wins.
func (w *kvWriter) Write(_ context.Context, batch []Entry) error {
	for _, e := range batch {
		w.pending[e.Key] = e.Value
	}
	return nil
}

// Flush applies the pending entries, without checkpoints. With them the
// pending entries wait for PreCommit.
func (w *kvWriter) Flush(context.Context) error {
	if w.txn {
		return nil
	}
	if err := w.apply(w.pending); err != nil {
		return err
	}
	clear(w.pending)
	return nil
}

// Close applies the pending entries without checkpoints, and drops them
// with checkpoints: they belong to no completed checkpoint.
func (w *kvWriter) Close() error {
	if w.txn {
		return nil
	}
	return w.Flush(context.Background())
}

// PreCommit writes the pending entries to a transaction file and returns
// its name; with nothing pending it returns an empty transaction.
func (w *kvWriter) PreCommit(_ context.Context, checkpoint int64) ([]byte, error) {
	if len(w.pending) == 0 {
		return nil, nil
	}
	name := fmt.Sprintf(".txn-%d-%d-%s.pending", w.info.Subtask, checkpoint, w.id)
	keys := sortedKeys(w.pending)
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, k := range keys {
		if err := enc.Encode(Entry{k, w.pending[k]}); err != nil {
			return nil, fmt.Errorf("kvstore: %w", err)
		}
	}
	if err := writeAtomic(w.dir, name, []byte(b.String())); err != nil {
		return nil, err
	}
	clear(w.pending)
	return []byte(name), nil
}

// Commit applies a transaction file's entries and deletes it. A missing
// file was committed before.
func (w *kvWriter) Commit(_ context.Context, txn []byte) error {
	if len(txn) == 0 {
		return nil
	}
	name := string(txn)
	if !isTxnFile(name) {
		return fmt.Errorf("kvstore: %q is not a transaction of this store", name)
	}
	path := filepath.Join(w.dir, name)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("kvstore: committing %s: %w", name, err)
	}
	entries := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<30)
	for sc.Scan() {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			f.Close()
			return fmt.Errorf("kvstore: transaction %s is corrupt: %w", name, err)
		}
		entries[e.Key] = e.Value
	}
	err = sc.Err()
	f.Close()
	if err != nil {
		return fmt.Errorf("kvstore: reading transaction %s: %w", name, err)
	}
	// Applying again after a crash in the middle sets the same values.
	if err := w.apply(entries); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("kvstore: %w", err)
	}
	syncDir(w.dir)
	return nil
}

// Recover commits the restored transactions, then deletes every other
// transaction file of this subtask and of the old subtasks whose
// transactions it took over (connector.Committer's rescale rule).
func (w *kvWriter) Recover(ctx context.Context, _ int64, commit [][]byte) error {
	w.txn = true
	for _, t := range commit {
		if err := w.Commit(ctx, t); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(w.dir)
	if err != nil {
		return fmt.Errorf("kvstore: %w", err)
	}
	for _, e := range entries {
		sub, ok := txnSubtask(e.Name())
		n := w.info.Parallelism
		if ok && (sub == w.info.Subtask || sub >= n && sub%n == w.info.Subtask) {
			if err := os.Remove(filepath.Join(w.dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("kvstore: aborting %s: %w", e.Name(), err)
			}
		}
	}
	return nil
}

// apply writes entries into the store, each key's file replaced whole.
func (w *kvWriter) apply(entries map[string]string) error {
	for _, k := range sortedKeys(entries) {
		if err := writeAtomic(w.dir, keyFile(k), []byte(entries[k])); err != nil {
			return err
		}
	}
	if len(entries) > 0 {
		syncDir(w.dir)
	}
	return nil
}

// writeAtomic writes data to dir/name through a temporary file and a
// rename, so that readers see the old content or the new, never part.
func writeAtomic(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("kvstore: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("kvstore: writing %s: %w", name, err)
	}
	return nil
}

// syncDir makes renames in dir durable where the platform supports it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

func keyFile(key string) string { return url.PathEscape(key) + ".value" }

// isTxnFile reports whether name is a transaction file's.
func isTxnFile(name string) bool {
	_, ok := txnSubtask(name)
	return ok && !strings.ContainsAny(name, `/\`)
}

// txnSubtask parses the subtask of ".txn-<subtask>-<checkpoint>-<writer>.pending".
func txnSubtask(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, ".txn-")
	if !ok || !strings.HasSuffix(s, ".pending") {
		return 0, false
	}
	sub, _, _ := strings.Cut(s, "-")
	n, err := strconv.Atoi(sub)
	return n, err == nil && n >= 0
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ReadStore returns the store in dir: every key with its value.
func ReadStore(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("kvstore: %w", err)
	}
	out := map[string]string{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".value")
		if !ok || e.IsDir() {
			continue
		}
		key, err := url.PathUnescape(name)
		if err != nil {
			continue // not a file of the store
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("kvstore: %w", err)
		}
		out[key] = string(b)
	}
	return out, nil
}
