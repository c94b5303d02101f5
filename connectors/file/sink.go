package file

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/weir-stream/weir/connector"
)

// JSONSink returns a sink that writes each record as one line of JSON
// (encoding/json, without HTML escaping) into part files in directory dir,
// one per subtask:
//
//	dir/.part-<subtask>.jsonl.inprogress   while the subtask writes
//	dir/part-<subtask>.jsonl               after it closed
//
// So the output is a directory; readers should read dir/part-*.jsonl (see
// Parts), which hold only complete lines of writers that finished.
//
// Open creates dir if it is missing (and fails if dir exists as a file) and
// opens the subtask's in-progress file for appending. Write encodes into a
// buffer in front of that file; Flush writes the buffer out and fsyncs the
// file; Close flushes and then renames the in-progress file to its final
// name, replacing an older part file of the same name. If a Write or Flush
// failed, Close leaves the in-progress file where it is.
//
// The sink is at-least-once: the engine calls Flush before it acknowledges
// a checkpoint, so records flushed then survive a failure; a subtask that is
// restarted from the checkpoint appends to its in-progress file, so records
// written after the checkpoint and replayed after the restart appear twice.
// Use a fresh directory for each job.
func JSONSink[T any](dir string) connector.Sink[T] {
	return &jsonSink[T]{dir: dir}
}

// Parts returns the finished part files in dir that JSONSink wrote, ordered
// by subtask.
func Parts(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	type part struct {
		subtask int
		path    string
	}
	var parts []part
	for _, e := range entries {
		if s, ok := partSubtask(e.Name()); ok && !e.IsDir() {
			parts = append(parts, part{s, filepath.Join(dir, e.Name())})
		}
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].subtask < parts[j].subtask })
	paths := make([]string, len(parts))
	for i, p := range parts {
		paths[i] = p.path
	}
	return paths, nil
}

// partSubtask parses "part-<subtask>.jsonl".
func partSubtask(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "part-")
	if !ok {
		return 0, false
	}
	if s, ok = strings.CutSuffix(s, ".jsonl"); !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0 && strconv.Itoa(n) == s
}

func partName(subtask int) string { return "part-" + strconv.Itoa(subtask) + ".jsonl" }

func inProgressName(subtask int) string { return "." + partName(subtask) + ".inprogress" }

type jsonSink[T any] struct{ dir string }

func (s *jsonSink[T]) Open(_ context.Context, info connector.SubtaskInfo) (connector.Writer[T], error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.dir, 0o777); err != nil {
		if fi, serr := os.Stat(s.dir); serr == nil && !fi.IsDir() {
			return nil, fmt.Errorf("file: sink directory %s exists and is not a directory", s.dir)
		}
		return nil, fmt.Errorf("file: sink directory: %w", err)
	}
	tmp := filepath.Join(s.dir, inProgressName(info.Subtask))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o666)
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	w := &jsonWriter[T]{f: f, tmp: tmp, final: filepath.Join(s.dir, partName(info.Subtask))}
	w.bw = bufio.NewWriterSize(f, 64<<10)
	w.enc = json.NewEncoder(w.bw)
	w.enc.SetEscapeHTML(false)
	return w, nil
}

type jsonWriter[T any] struct {
	f          *os.File
	bw         *bufio.Writer
	enc        *json.Encoder
	tmp, final string
	err        error // sticky: the first failed Write or Flush
	closed     bool
}

func (w *jsonWriter[T]) Write(_ context.Context, batch []T) error {
	if w.err != nil {
		return w.err
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
	if w.err != nil {
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
