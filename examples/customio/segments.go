package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weir-stream/weir/connector"
)

// SegmentSource returns a source of the lines of a log kept as numbered
// segment files in dir: 1.log, 2.log, ... (the number may have leading
// zeros; other files are ignored). A writer appends lines to the
// highest-numbered segment and starts the next one when it is full, so a
// segment is finished once a higher-numbered one exists.
//
// Subtask i of n reads the segments whose number is i modulo n, in
// order, and yields each line without its line terminator ("\n" or
// "\r\n"). Its Position is the segment it is in and the byte offset of
// its next line, so a restored reader seeks straight back to it.
//
// Without follow the source is bounded: a reader yields what the segments
// hold when it reaches them (a last line without "\n" included) and then
// io.EOF. With follow it tails the log: it yields a line only once its
// "\n" is written (or a later segment exists), and when it has read
// everything it waits for more instead of ending.
func SegmentSource(dir string, follow bool) connector.Source[string] {
	return segmentSource{dir: dir, follow: follow}
}

type segmentSource struct {
	dir    string
	follow bool
}

// Deterministic reports that a reader reopened at a position yields the
// same lines again (connector.Deterministic): segments are only appended
// to.
func (segmentSource) Deterministic() bool { return true }

// pollInterval is how long a following reader with nothing to read waits
// before Read returns 0, nil (the engine wants Read back within ~10ms).
const pollInterval = 10 * time.Millisecond

func (s segmentSource) Open(_ context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[string], error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(s.dir); err != nil || !fi.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return nil, connector.ConfigError(fmt.Errorf("segments: log directory %s: %w", s.dir, err))
	}
	r := &segmentReader{src: s, info: info, seg: -1}
	if len(pos) == 0 {
		return r, nil
	}
	seg, off, err := decodePosition(pos)
	if err != nil {
		return nil, err
	}
	if int(seg%int64(info.Parallelism)) != info.Subtask {
		return nil, fmt.Errorf("segments: position %q is in segment %d, which subtask %d of %d does not read (the positions are of another parallelism)",
			pos, seg, info.Subtask, info.Parallelism)
	}
	if err := r.openSegment(seg, off); err != nil {
		return nil, err
	}
	return r, nil
}

// segmentReader reads one subtask's segments.
type segmentReader struct {
	src  segmentSource
	info connector.SubtaskInfo
	seg  int64 // the segment being read; -1 before the first
	off  int64 // offset in seg of the next line
	f    *os.File
	br   *bufio.Reader
	eof  bool // bounded and read to the end
}

// Read fills buf with lines. It returns io.EOF once a bounded reader has
// read its last segment; a following reader that finds nothing new waits
// up to pollInterval and returns 0, nil.
func (r *segmentReader) Read(ctx context.Context, buf []string) (int, error) {
	n := 0
	for n < len(buf) {
		if r.eof {
			break
		}
		if r.f == nil {
			ok, err := r.next()
			if err != nil {
				return n, err
			}
			if !ok {
				break
			}
		}
		line, err := r.br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return n, fmt.Errorf("segments: reading %s: %w", r.path(r.seg), err)
		}
		complete := err == nil
		if !complete {
			// The end of the segment, maybe in the middle of a line.
			finished, ferr := r.finished()
			if ferr != nil {
				return n, ferr
			}
			if !finished {
				// A writer may still append: read the partial line again
				// once it is complete.
				if _, err := r.f.Seek(r.off, io.SeekStart); err != nil {
					return n, fmt.Errorf("segments: %w", err)
				}
				r.br.Reset(r.f)
				break
			}
			r.f.Close()
			r.f = nil
			if len(line) == 0 {
				continue
			}
		}
		r.off += int64(len(line))
		line = bytes.TrimSuffix(line, []byte("\n"))
		buf[n] = string(bytes.TrimSuffix(line, []byte("\r")))
		n++
	}
	if n == 0 && r.eof {
		return 0, io.EOF
	}
	if n == 0 && r.src.follow {
		t := time.NewTimer(pollInterval)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-t.C:
		}
	}
	return n, nil
}

// finished reports whether the segment being read is complete: a bounded
// reader takes every segment as complete; a following one, a segment
// below the highest in the directory.
func (r *segmentReader) finished() (bool, error) {
	if !r.src.follow {
		return true, nil
	}
	segs, err := r.segments()
	if err != nil {
		return false, err
	}
	return len(segs) > 0 && segs[len(segs)-1] > r.seg, nil
}

// next opens the subtask's next segment after r.seg, reporting whether
// there is one. A bounded reader without one is at its end.
func (r *segmentReader) next() (bool, error) {
	segs, err := r.segments()
	if err != nil {
		return false, err
	}
	for _, s := range segs {
		if s > r.seg && int(s%int64(r.info.Parallelism)) == r.info.Subtask {
			return true, r.openSegment(s, 0)
		}
	}
	r.eof = !r.src.follow
	return false, nil
}

// openSegment opens segment seg at offset off.
func (r *segmentReader) openSegment(seg, off int64) error {
	f, err := os.Open(r.path(seg))
	if err != nil {
		return fmt.Errorf("segments: segment %d: %w", seg, err)
	}
	if fi, err := f.Stat(); err != nil || fi.Size() < off {
		f.Close()
		if err == nil {
			err = fmt.Errorf("position at byte %d is beyond the end of the segment (%d bytes)", off, fi.Size())
		}
		return fmt.Errorf("segments: segment %d: %w", seg, err)
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		f.Close()
		return fmt.Errorf("segments: segment %d: %w", seg, err)
	}
	r.seg, r.off, r.f = seg, off, f
	if r.br == nil {
		r.br = bufio.NewReaderSize(f, 64<<10)
	} else {
		r.br.Reset(f)
	}
	return nil
}

// path returns the file of segment seg, whatever its leading zeros.
func (r *segmentReader) path(seg int64) string {
	if p, ok := r.names()[seg]; ok {
		return p
	}
	return filepath.Join(r.src.dir, strconv.FormatInt(seg, 10)+".log")
}

// names maps the segment numbers in the directory to their files.
func (r *segmentReader) names() map[int64]string {
	entries, _ := os.ReadDir(r.src.dir)
	m := make(map[int64]string, len(entries))
	for _, e := range entries {
		if n, ok := segmentNumber(e.Name()); ok && !e.IsDir() {
			m[n] = filepath.Join(r.src.dir, e.Name())
		}
	}
	return m
}

// segments lists the segment numbers in the directory, in order.
func (r *segmentReader) segments() ([]int64, error) {
	if _, err := os.Stat(r.src.dir); err != nil {
		return nil, fmt.Errorf("segments: %w", err)
	}
	var segs []int64
	for n := range r.names() {
		segs = append(segs, n)
	}
	slices.Sort(segs)
	return segs, nil
}

// segmentNumber parses "<digits>.log".
func segmentNumber(name string) (int64, bool) {
	digits, ok := strings.CutSuffix(name, ".log")
	if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	return n, err == nil
}

// Position returns "<segment>:<offset>", or nil before the first segment.
func (r *segmentReader) Position() connector.Position {
	if r.seg < 0 {
		return nil
	}
	return connector.Position(strconv.FormatInt(r.seg, 10) + ":" + strconv.FormatInt(r.off, 10))
}

// decodePosition parses a Position of segmentReader.
func decodePosition(pos connector.Position) (seg, off int64, err error) {
	a, b, ok := strings.Cut(string(pos), ":")
	if ok {
		seg, err = strconv.ParseInt(a, 10, 64)
		if err == nil {
			off, err = strconv.ParseInt(b, 10, 64)
		}
	}
	if !ok || err != nil || seg < 0 || off < 0 {
		return 0, 0, fmt.Errorf("segments: corrupt position %q, want <segment>:<offset>", pos)
	}
	return seg, off, nil
}

func (r *segmentReader) Close() error {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
	return nil
}
