// Package file provides sources that read text and JSON lines from files,
// and a sink that writes JSON lines to part files in a directory.
//
// # Sources and splits
//
// Lines and JSONLines read a list of files as if they were concatenated (a
// file that does not end in a newline still ends its last line). Their
// subtasks split the input by byte ranges, like Hadoop input splits: subtask
// s of n owns the bytes [s*N/n, (s+1)*N/n) of the N bytes of all files
// together and reads exactly the lines that start in its range; a line
// crossing the end of the range belongs to the subtask where it starts. So
// one big file is read in parallel, each subtask reading its part in order,
// and the subtasks in order together yield every line once.
//
// A line ends at "\n"; the "\n" and a "\r" before it are not part of the
// line. The files are examined at every Open and must not change while a
// job reads them. A file that ends before the size it had at Open (it was
// truncated or replaced) fails the reader with an error wrapping
// connector.ErrConfig that names the file and both sizes.
//
// # Positions
//
// A reader's Position is the byte offset of the next line it would read: the
// index of the file in the list and the offset in that file, as two
// uvarints. Reopening at it resumes with that line. A position is valid only
// for the same list of unchanged files and the same subtask and parallelism;
// Open rejects a position that does not point at the start of a line in the
// subtask's split.
//
// Both sources are connector.Rescalers: restored at another parallelism,
// the bytes the old subtasks had left to read are split among the new
// ones as a fresh start splits the files, and each reads its pieces in
// file order; its position then lists them (see rescale.go).
//
// # Malformed records
//
// JSONLines decodes each non-blank line into a T. A line that does not decode
// either fails the reader with a *connector.MalformedError locating it by
// file, line number and byte offset (connector.Fail, the default), or is
// dropped, counted and reported to a callback (connector.Skip); see
// JSONOptions.
//
// # Sink
//
// JSONSink writes one JSON document per line into a directory; see JSONSink
// for the layout and guarantees.
package file

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"os"

	"github.com/weir-stream/weir/connector"
)

// readBufferSize is the size of a reader's bufio.Reader.
const readBufferSize = 256 << 10

// Lines returns a source of the text lines of the given files, without their
// line endings.
func Lines(paths ...string) connector.Source[string] {
	return &linesSource{paths: append([]string(nil), paths...)}
}

type linesSource struct{ paths []string }

func (s *linesSource) Open(_ context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[string], error) {
	lr, err := openLines(s.paths, info, pos)
	if err != nil {
		return nil, err
	}
	return &linesReader{lr: lr}, nil
}

type linesReader struct{ lr *lineReader }

func (r *linesReader) Read(_ context.Context, buf []string) (int, error) {
	for k := range buf {
		line, err := r.lr.next()
		if err != nil {
			if k > 0 { // return what we have; the error is sticky
				return k, nil
			}
			return 0, err
		}
		buf[k] = string(line)
	}
	return len(buf), nil
}

func (r *linesReader) Position() connector.Position { return r.lr.position() }
func (r *linesReader) Close() error                 { return r.lr.close() }

// input describes the files of a source as one concatenated byte range.
type input struct {
	paths        []string
	sizes, bases []int64 // file i spans [bases[i], bases[i]+sizes[i])
	total        int64
}

func statInput(paths []string) (*input, error) {
	in := &input{paths: paths, sizes: make([]int64, len(paths)), bases: make([]int64, len(paths))}
	for i, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				err = connector.ConfigError(err)
			}
			return nil, fmt.Errorf("file: %w", err)
		}
		if fi.IsDir() {
			return nil, connector.ConfigError(fmt.Errorf("file: %s is a directory", p))
		}
		in.bases[i], in.sizes[i] = in.total, fi.Size()
		in.total += fi.Size()
	}
	return in, nil
}

// split returns the byte range [lo, hi) of subtask s of n.
func (in *input) split(s, n int) (lo, hi int64) {
	at := func(s int) int64 {
		h, l := bits.Mul64(uint64(in.total), uint64(s))
		q, _ := bits.Div64(h, l, uint64(n))
		return int64(q)
	}
	return at(s), at(s + 1)
}

// global returns the offset of byte off of file i in the concatenation.
func (in *input) global(i int, off int64) int64 {
	if i >= len(in.paths) {
		return in.total
	}
	return in.bases[i] + off
}

// encodePosition encodes the start of a line: file index and byte offset.
func encodePosition(file int, off int64) connector.Position {
	return binary.AppendUvarint(binary.AppendUvarint(nil, uint64(file)), uint64(off))
}

func decodePosition(pos connector.Position) (file int, off int64, err error) {
	f, n := binary.Uvarint(pos)
	if n > 0 {
		o, m := binary.Uvarint(pos[n:])
		if m > 0 && n+m == len(pos) && f <= 1<<31 && o <= 1<<62 {
			return int(f), int64(o), nil
		}
	}
	return 0, 0, fmt.Errorf("file: corrupt position %x: want two uvarints, file index and byte offset", []byte(pos))
}

// readAt reads exactly len(b) bytes at off.
func readAt(f *os.File, b []byte, off int64) error {
	_, err := f.ReadAt(b, off)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// Deterministic reports that a reader opened at a position returns the
// same lines in the same order every time (connector.Deterministic).
func (s *linesSource) Deterministic() bool { return true }
