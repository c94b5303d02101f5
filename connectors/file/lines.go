package file

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/weir-stream/weir/connector"
)

// lineReader yields the lines of one subtask's split.
type lineReader struct {
	in *input
	hi int64 // end of the split: lines starting at or after hi are not ours

	// ranges: the reader was opened at a rescaled position and reads the
	// ranges it lists; rest are those after the current one (rescale.go).
	ranges bool
	rest   []byteRange

	file int   // current file
	off  int64 // offset in file of the next line
	f    *os.File
	br   *bufio.Reader
	long []byte // a line longer than br's buffer
	err  error  // sticky: io.EOF at the end of the split, or a read error

	lastFile int   // file of the line next returned last
	lastOff  int64 // offset of that line

	// Line numbers, only computed when asked for: the line at startOff of
	// the current file is number baseLine (0 if not counted yet), and lines
	// lines have been read since.
	startOff, lines, baseLine int64
}

// openLines opens subtask info's split of paths at pos (nil: its start).
func openLines(paths []string, info connector.SubtaskInfo, pos connector.Position) (*lineReader, error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	in, err := statInput(paths)
	if err != nil {
		return nil, err
	}
	lo, hi := in.split(info.Subtask, info.Parallelism)
	r := &lineReader{in: in, hi: hi}
	switch {
	case len(pos) == 0: // nil or empty: the beginning
		err = r.seekSplit(lo)
	case isRanges(pos):
		var rs []byteRange
		if rs, err = decodeRanges(pos, in); err == nil {
			err = r.seekRanges(rs)
		}
	default:
		err = r.seekPosition(pos, lo, info)
	}
	if err != nil {
		r.close()
		return nil, err
	}
	r.lastFile, r.lastOff = r.file, r.off
	return r, nil
}

// seekSplit moves to the first line that starts at or after lo.
func (r *lineReader) seekSplit(lo int64) error {
	in := r.in
	r.file = len(in.paths)
	if lo >= r.hi {
		return nil // an empty split
	}
	for i := range in.paths {
		if lo < in.bases[i]+in.sizes[i] {
			r.file = i
			break
		}
	}
	if r.file == len(in.paths) {
		return nil // past the last byte: nothing to read
	}
	o := lo - in.bases[r.file]
	if o == 0 {
		return nil
	}
	// The split starts mid-file: the first line of ours starts after the
	// first "\n" at or after o-1.
	if err := r.openFile(o - 1); err != nil {
		return err
	}
	r.off = o - 1
	for {
		b, err := r.br.ReadSlice('\n')
		r.off += int64(len(b))
		switch {
		case err == nil:
			r.startOff, r.baseLine = r.off, 0
			return nil
		case err == io.EOF:
			r.nextFile()
			return nil
		case err != bufio.ErrBufferFull:
			return r.readErr(err)
		}
	}
}

// seekPosition moves to a position taken earlier by this subtask's reader.
func (r *lineReader) seekPosition(pos connector.Position, lo int64, info connector.SubtaskInfo) error {
	file, off, err := decodePosition(pos)
	if err != nil {
		return err
	}
	in := r.in
	bad := func(why string) error {
		return fmt.Errorf("file: position (file %d, byte %d) %s; positions are valid only for the subtask (here %d of %d) that took them, on unchanged files",
			file, off, why, info.Subtask, info.Parallelism)
	}
	switch {
	case file > len(in.paths) || file == len(in.paths) && off != 0:
		return bad(fmt.Sprintf("is beyond the %d files", len(in.paths)))
	case file < len(in.paths) && off > in.sizes[file]:
		return bad(fmt.Sprintf("is beyond the end of %s (%d bytes)", in.paths[file], in.sizes[file]))
	case in.global(file, off) < lo:
		return bad("lies before the subtask's split")
	}
	r.file, r.off = file, off
	if file == len(in.paths) || off == 0 || off == in.sizes[file] {
		return nil
	}
	if err := r.openFile(off); err != nil {
		return err
	}
	var b [1]byte
	if err := readAt(r.f, b[:], off-1); err != nil {
		return r.readErr(err)
	}
	if b[0] != '\n' {
		return bad("is not at the start of a line in " + in.paths[file])
	}
	return nil
}

// openFile opens the current file at offset off.
func (r *lineReader) openFile(off int64) error {
	f, err := os.Open(r.in.paths[r.file])
	if err != nil {
		return fmt.Errorf("file: %w", err)
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		f.Close()
		return r.readErr(err)
	}
	r.f = f
	if r.br == nil {
		r.br = bufio.NewReaderSize(f, readBufferSize)
	} else {
		r.br.Reset(f)
	}
	r.startOff, r.lines, r.baseLine = off, 0, 0
	if off == 0 {
		r.baseLine = 1
	}
	return nil
}

// nextFile closes the current file and moves to the start of the next.
func (r *lineReader) nextFile() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
	r.file, r.off = r.file+1, 0
}

// truncated is the error of a file that ended at byte end, before the
// size it had when the reader was opened: someone truncated or replaced
// it. The lines already read may belong to another version of the file,
// so no restart can make the output right.
func (r *lineReader) truncated(end int64) error {
	return connector.ConfigError(fmt.Errorf("file: %s shrank while being read: it had %d bytes when opened but ended at byte %d; input files must not change while a job reads them",
		r.in.paths[r.file], r.in.sizes[r.file], end))
}

func (r *lineReader) readErr(err error) error {
	return fmt.Errorf("file: reading %s: %w", r.in.paths[r.file], err)
}

// next returns the next line of the split, without its line ending. The
// line is valid until the next call. At the end of the split it returns
// io.EOF; after an error it keeps returning it.
func (r *lineReader) next() ([]byte, error) {
	for r.err == nil {
		if r.in.global(r.file, r.off) >= r.hi {
			if len(r.rest) > 0 {
				if err := r.nextRange(); err != nil {
					r.err = err
				}
				continue
			}
			r.err = io.EOF
			break
		}
		if r.f == nil {
			if r.off >= r.in.sizes[r.file] { // empty or finished file
				r.nextFile()
				continue
			}
			if err := r.openFile(r.off); err != nil {
				r.err = err
				break
			}
		}
		line, err := r.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			r.long = append(r.long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = r.br.ReadSlice('\n')
				r.long = append(r.long, line...)
			}
			line = r.long
		}
		if err != nil && err != io.EOF {
			r.err = r.readErr(err)
			break
		}
		if err == io.EOF && r.off+int64(len(line)) < r.in.sizes[r.file] {
			r.err = r.truncated(r.off + int64(len(line)))
			break
		}
		if len(line) == 0 { // end of file
			r.nextFile()
			continue
		}
		r.lastFile, r.lastOff = r.file, r.off
		r.off += int64(len(line))
		r.lines++
		if line[len(line)-1] == '\n' {
			line = line[:len(line)-1]
			if len(line) > 0 && line[len(line)-1] == '\r' {
				line = line[:len(line)-1]
			}
		}
		return line, nil
	}
	r.close()
	return nil, r.err
}

// position returns the position of the next line.
func (r *lineReader) position() connector.Position {
	if r.ranges {
		return r.rangesFrom(r.in.global(r.file, r.off))
	}
	if r.file < len(r.in.paths) && r.off >= r.in.sizes[r.file] {
		return encodePosition(r.file+1, 0)
	}
	return encodePosition(r.file, r.off)
}

// positionOfLast returns the position of the line returned last, so that
// reopening there reads it again.
func (r *lineReader) positionOfLast() connector.Position {
	if r.ranges {
		return r.rangesFrom(r.in.global(r.lastFile, r.lastOff))
	}
	return encodePosition(r.lastFile, r.lastOff)
}

// where locates the line returned last, as "path:line (byte offset)".
func (r *lineReader) where() string {
	path := r.in.paths[r.lastFile]
	if r.baseLine == 0 {
		n, err := countLines(path, r.startOff)
		if err != nil {
			return fmt.Sprintf("%s (byte %d)", path, r.lastOff)
		}
		r.baseLine = n + 1
	}
	return fmt.Sprintf("%s:%d (byte %d)", path, r.baseLine+r.lines-1, r.lastOff)
}

// countLines counts the "\n" in the first n bytes of the file at path.
func countLines(path string, n int64) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	var count int64
	rd := io.LimitReader(f, n)
	for {
		k, err := rd.Read(buf)
		count += int64(bytes.Count(buf[:k], []byte{'\n'}))
		if errors.Is(err, io.EOF) {
			return count, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

func (r *lineReader) close() error {
	if r.f != nil {
		err := r.f.Close()
		r.f = nil
		return err
	}
	return nil
}
