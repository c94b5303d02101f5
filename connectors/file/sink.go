package file

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/weir-stream/weir/connector"
)

// JSONSink returns a sink that writes each record as one line of JSON
// (encoding/json, without HTML escaping) into part files in directory dir.
// The output is a directory; readers should read dir/part-*.jsonl (see
// Parts), which hold only complete lines that are final.
//
// Every writer (every Open) draws a random writer id, and the files it
// writes before they are final carry it (<id> below): two writers of the
// same subtask — of two attempts that reuse an attempt number, or of a
// deposed coordinator's worker still running beside its successor's — never
// write, rename or delete each other's in-progress or pending files.
//
// Without checkpoints each subtask writes
// dir/.part-<subtask>.jsonl.<id>.inprogress and renames it to
// dir/part-<subtask>.jsonl when it closes (in a restarted attempt n of the
// job: dir/part-<subtask>-<n>.jsonl, so no attempt replaces another's
// output). If a Write or Flush failed, Close leaves the in-progress file
// where it is.
//
// With checkpoints the writer commits with them (connector.Committer), so
// output is exactly-once: records go to an in-progress file
// (dir/.part-<subtask>-<attempt>-<n>.jsonl.<id>.inprogress); at a
// checkpoint barrier the file is synced and renamed
// dir/.part-<subtask>-<checkpoint>.jsonl.<id>.pending (pre-commit), the
// transaction the checkpoint records; when the checkpoint completes it is
// renamed dir/part-<subtask>-<checkpoint>.jsonl (commit). A restore commits
// the restored checkpoint's pending files and deletes every other pending
// or in-progress file of the subtask, so no record written after the
// restored checkpoint ever becomes visible.
//
// Open creates dir if it is missing (and fails if dir exists as a file).
// It refuses dir "-", which on a command line means standard output (see
// cli.OutputSink), rather than create a directory named "-".
func JSONSink[T any](dir string) connector.Sink[T] {
	return &jsonSink[T]{dir: dir}
}

// Parts returns the final part files in dir that JSONSink wrote, ordered
// by checkpoint (attempt, without checkpoints) and then subtask: the order
// in which the rows of any one key were written, also when a restore at
// another parallelism moved the key to another subtask (a changelog read
// subtask by subtask would show a moved key's later rows before its
// earlier ones).
func Parts(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	type part struct {
		subtask    int
		checkpoint int64
		path       string
	}
	var parts []part
	for _, e := range entries {
		if s, c, ok := parsePart(e.Name()); ok && !e.IsDir() {
			parts = append(parts, part{s, c, filepath.Join(dir, e.Name())})
		}
	}
	sort.Slice(parts, func(i, j int) bool {
		if parts[i].checkpoint != parts[j].checkpoint {
			return parts[i].checkpoint < parts[j].checkpoint
		}
		return parts[i].subtask < parts[j].subtask
	})
	paths := make([]string, len(parts))
	for i, p := range parts {
		paths[i] = p.path
	}
	return paths, nil
}

// parsePart parses "part-<subtask>.jsonl" (checkpoint -1) and
// "part-<subtask>-<checkpoint>.jsonl".
func parsePart(name string) (subtask int, checkpoint int64, ok bool) {
	s, ok := strings.CutPrefix(name, "part-")
	if !ok {
		return 0, 0, false
	}
	if s, ok = strings.CutSuffix(s, ".jsonl"); !ok {
		return 0, 0, false
	}
	sub, ck, hasCk := strings.Cut(s, "-")
	n, err := strconv.Atoi(sub)
	if err != nil || n < 0 || strconv.Itoa(n) != sub {
		return 0, 0, false
	}
	if !hasCk {
		return n, -1, true
	}
	c, err := strconv.ParseInt(ck, 10, 64)
	if err != nil || c < 0 || strconv.FormatInt(c, 10) != ck {
		return 0, 0, false
	}
	return n, c, true
}

func partName(subtask int) string { return "part-" + strconv.Itoa(subtask) + ".jsonl" }

// committedName, pendingName and txnPrefix name the files of transactions.
func committedName(subtask int, checkpoint int64) string {
	return fmt.Sprintf("part-%d-%d.jsonl", subtask, checkpoint)
}

// pendingName names the pending file of writer id's transaction of
// checkpoint.
func pendingName(subtask int, checkpoint int64, id string) string {
	return "." + committedName(subtask, checkpoint) + "." + id + ".pending"
}

// committedOf returns the final name of pending file pending:
// .part-<subtask>-<checkpoint>.jsonl[.<writer>].pending (without a writer
// id as an older weir named it) is committed as
// part-<subtask>-<checkpoint>.jsonl.
func committedOf(pending string) (string, bool) {
	name, ok := strings.CutPrefix(pending, ".")
	if !ok {
		return "", false
	}
	if name, ok = strings.CutSuffix(name, ".pending"); !ok {
		return "", false
	}
	if i := strings.Index(name, ".jsonl."); i >= 0 && !strings.Contains(name[i+len(".jsonl."):], ".") {
		name = name[:i+len(".jsonl")]
	}
	if _, ck, ok := parsePart(name); !ok || ck < 0 {
		return "", false
	}
	return name, true
}

func txnPrefix(subtask int) string { return fmt.Sprintf(".part-%d-", subtask) }

// writerID returns a random id for a new writer: 64 bits, so that no two
// writers of a subtask ever share one.
func writerID() string { return fmt.Sprintf("%016x", rand.Uint64()) }

type jsonSink[T any] struct{ dir string }

func (s *jsonSink[T]) Open(_ context.Context, info connector.SubtaskInfo) (connector.Writer[T], error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	switch s.dir {
	case "-":
		return nil, connector.ConfigError(errors.New(`file: sink directory "-": "-" means standard output on the command line, not a directory; use cli.OutputSink, which maps it to the stdout sink, or name a directory`))
	case "":
		return nil, connector.ConfigError(errors.New("file: sink directory is empty"))
	}
	if err := os.MkdirAll(s.dir, 0o777); err != nil {
		if fi, serr := os.Stat(s.dir); serr == nil && !fi.IsDir() {
			return nil, connector.ConfigError(fmt.Errorf("file: sink directory %s exists and is not a directory", s.dir))
		}
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENOTDIR) {
			return nil, connector.ConfigError(fmt.Errorf("file: sink directory: %w", err))
		}
		return nil, fmt.Errorf("file: sink directory: %w", err)
	}
	final := partName(info.Subtask)
	if info.Attempt > 0 {
		final = committedName(info.Subtask, int64(info.Attempt))
	}
	id := writerID()
	tmp := filepath.Join(s.dir, "."+final+"."+id+".inprogress")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	w := &jsonWriter[T]{f: f, tmp: tmp, final: filepath.Join(s.dir, final),
		dir: s.dir, subtask: info.Subtask, parallelism: info.Parallelism, attempt: info.Attempt, id: id}
	w.bw = bufio.NewWriterSize(f, 64<<10)
	w.enc = json.NewEncoder(w.bw)
	w.enc.SetEscapeHTML(false)
	return w, nil
}

type jsonWriter[T any] struct {
	dir         string
	subtask     int
	parallelism int
	attempt     int
	id          string // the writer's random id, in the names of its files
	txn         bool   // transactional mode, after Recover
	seq         int
	f           *os.File
	bw          *bufio.Writer
	enc         *json.Encoder
	tmp, final  string
	err         error // sticky: the first failed Write or Flush
	closed      bool
}

func (w *jsonWriter[T]) Write(_ context.Context, batch []T) error {
	if w.err != nil {
		return w.err
	}
	if w.f == nil && len(batch) > 0 {
		if w.err = w.openTxn(); w.err != nil {
			return w.err
		}
	}
	for i := range batch {
		if err := w.enc.Encode(&batch[i]); err != nil {
			w.err = fmt.Errorf("file: writing %s: %w", w.tmp, err)
			return w.err
		}
	}
	return nil
}

func (w *jsonWriter[T]) Flush(context.Context) error {
	if w.err != nil || w.f == nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		w.err = fmt.Errorf("file: writing %s: %w", w.tmp, err)
	} else if err := w.f.Sync(); err != nil {
		w.err = fmt.Errorf("file: syncing %s: %w", w.tmp, err)
	}
	return w.err
}

func (w *jsonWriter[T]) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if w.txn {
		// Records after the last pre-commit belong to no checkpoint: they
		// are dropped (a restore or the final checkpoint decides).
		if w.f != nil {
			w.f.Close()
			os.Remove(w.tmp)
		}
		return nil
	}
	if w.err != nil { // a Write or Flush failed: keep the in-progress file
		if err := w.f.Close(); err != nil {
			return fmt.Errorf("file: closing %s: %w", w.tmp, err)
		}
		return nil
	}
	err := w.Flush(context.Background())
	if cerr := w.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("file: closing %s: %w", w.tmp, cerr)
	}
	if err != nil {
		return err
	}
	if err := os.Rename(w.tmp, w.final); err != nil {
		return fmt.Errorf("file: %w", err)
	}
	syncDir(filepath.Dir(w.final))
	return nil
}

// syncDir makes a rename in dir durable where the platform supports it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // not supported everywhere; the rename happened anyway
		d.Close()
	}
}

// The writer's two-phase commit (connector.Committer). Recover switches
// the writer to transactional mode: records then go to an in-progress file
// per transaction.

// Recover commits the restored transactions and deletes every other
// transaction file this subtask left behind, and the committed parts of
// checkpoints after the restored one (which exist when an older checkpoint
// is restored because a newer one was unusable).
func (w *jsonWriter[T]) Recover(_ context.Context, restored int64, commit [][]byte) error {
	w.txn = true
	keep := map[string]bool{}
	for _, t := range commit {
		if err := w.commit(string(t)); err != nil {
			return err
		}
		keep[string(t)] = true
	}
	// Start afresh: the plain-mode in-progress file opened by Open is not
	// used in transactional mode.
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("file: closing %s: %w", w.tmp, err)
	}
	os.Remove(w.tmp)
	w.f = nil
	entries, err := os.ReadDir(w.dir)
	if err != nil {
		return fmt.Errorf("file: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		drop := false
		if sub, txn, ok := parseHidden(name); ok && w.owns(sub) {
			drop = txn && !keep[name] ||
				!txn && strings.HasSuffix(name, ".inprogress") // of an attempt 0 killed before its Recover
		}
		if sub, ck, ok := parsePart(name); ok && w.owns(sub) && restored > 0 && ck > restored {
			drop = true // committed by a checkpoint newer than the restored one
		}
		if drop {
			if err := os.Remove(filepath.Join(w.dir, name)); err != nil {
				return fmt.Errorf("file: aborting %s: %w", name, err)
			}
		}
	}
	return nil
}

// owns reports whether Recover cleans up after subtask sub: its own, and,
// after a restore at a lower parallelism, those of the old subtasks no
// longer there whose transactions it was handed (sub mod parallelism; see
// connector.Committer).
func (w *jsonWriter[T]) owns(sub int) bool {
	return sub == w.subtask || w.parallelism > 0 && sub >= w.parallelism && sub%w.parallelism == w.subtask
}

// parseHidden parses the subtask of a file not yet final:
// .part-<subtask>-... (a transaction's, txn) or .part-<subtask>.jsonl...
// (a plain-mode in-progress file).
func parseHidden(name string) (subtask int, txn, ok bool) {
	s, ok := strings.CutPrefix(name, ".part-")
	if !ok {
		return 0, false, false
	}
	i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if i <= 0 {
		return 0, false, false
	}
	n, err := strconv.Atoi(s[:i])
	if err != nil {
		return 0, false, false
	}
	switch {
	case s[i] == '-':
		return n, true, true
	case strings.HasPrefix(s[i:], ".jsonl."):
		return n, false, true
	}
	return 0, false, false
}

// openTxn opens the in-progress file of the next transaction.
func (w *jsonWriter[T]) openTxn() error {
	w.seq++
	w.tmp = filepath.Join(w.dir, fmt.Sprintf("%s%d-%d.jsonl.%s.inprogress", txnPrefix(w.subtask), w.attempt, w.seq, w.id))
	f, err := os.OpenFile(w.tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return fmt.Errorf("file: %w", err)
	}
	w.f = f
	w.bw.Reset(f)
	return nil
}

// PreCommit makes the transaction's records durable under a pending name
// and returns that name.
func (w *jsonWriter[T]) PreCommit(ctx context.Context, checkpoint int64) ([]byte, error) {
	if w.f == nil {
		return nil, nil // nothing written since the last pre-commit
	}
	if err := w.Flush(ctx); err != nil {
		return nil, err
	}
	if err := w.f.Close(); err != nil {
		return nil, fmt.Errorf("file: closing %s: %w", w.tmp, err)
	}
	w.f = nil
	name := pendingName(w.subtask, checkpoint, w.id)
	if err := os.Rename(w.tmp, filepath.Join(w.dir, name)); err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	syncDir(w.dir)
	return []byte(name), nil
}

// Commit renames a pending file to its final name. Committing a
// transaction again, or an empty one, does nothing.
func (w *jsonWriter[T]) Commit(_ context.Context, txn []byte) error { return w.commit(string(txn)) }

func (w *jsonWriter[T]) commit(pending string) error {
	if pending == "" {
		return nil
	}
	final, ok := committedOf(pending)
	if !ok {
		return fmt.Errorf("file: %q is not a pending part file", pending)
	}
	err := os.Rename(filepath.Join(w.dir, pending), filepath.Join(w.dir, final))
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(filepath.Join(w.dir, final)); serr == nil {
			return nil // committed before
		}
		// Someone removed committed or pre-committed output: no restart
		// brings it back.
		return connector.ConfigError(fmt.Errorf("file: transaction %s in %s is lost: neither it nor %s exists (was the output directory changed while the job ran?)", pending, w.dir, final))
	}
	if err != nil {
		return fmt.Errorf("file: committing %s: %w", pending, err)
	}
	syncDir(w.dir)
	return nil
}

// ReadLines returns every line of the final part files in dir (see
// Parts), part file by part file: the output a JSONSink made visible.
func ReadLines(dir string) ([]string, error) {
	parts, err := Parts(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range parts {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("file: %w", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<30)
		for sc.Scan() {
			out = append(out, sc.Text())
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("file: reading %s: %w", p, err)
		}
	}
	return out, nil
}
