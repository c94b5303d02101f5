package connectortest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"testing"

	"github.com/weir-stream/weir/connector"
)

// maxIdleReads is how many consecutive "0, nil" reads a bounded reader may
// return before the checks give up on it.
const maxIdleReads = 1000

// readBufSize is the buffer size of reads whose buffer size is not the point.
const readBufSize = 64

// rewindBufSizes are the buffer sizes CheckRewind reads with.
var rewindBufSizes = []int{1, 7, readBufSize}

func info(n, s int) connector.SubtaskInfo {
	return connector.SubtaskInfo{Operator: "connectortest", Subtask: s, Parallelism: n}
}

// fmtPos formats a position for an error message.
func fmtPos(p connector.Position) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprintf("%x", []byte(p))
}

// subtaskErr prefixes err with the subtask it happened in.
func subtaskErr(s, n int, format string, args ...any) error {
	return fmt.Errorf("subtask %d of %d: %s", s, n, fmt.Sprintf(format, args...))
}

// recoverTo turns a panic in subtask s's goroutine into an error, so that
// the check reports it instead of crashing the test binary.
func recoverTo(err *error, s, n int) {
	if e := recover(); e != nil {
		*err = subtaskErr(s, n, "panic: %v\n%s", e, debug.Stack())
	}
}

// step is one Read call of a reference read: the records read so far and the
// Position taken right after the call.
type step struct {
	count int
	pos   connector.Position
}

// reading is one subtask's read from some position to EOF.
type reading[T any] struct {
	recs  []T
	start connector.Position // Position before the first Read
	steps []step             // after every Read that returned records
	end   connector.Position // Position after io.EOF
}

// readToEOF reads r to EOF with buffers of size bufSize, at most limit
// records, and checks the Read contract on the way. It also checks that Read
// keeps returning io.EOF and that Position works after EOF. It does not
// close r.
func readToEOF[T any](ctx context.Context, r connector.Reader[T], bufSize, limit int) (reading[T], error) {
	var rd reading[T]
	rd.start = r.Position()
	buf := make([]T, bufSize)
	idle := 0
	for {
		n, err := r.Read(ctx, buf)
		if n < 0 || n > len(buf) {
			return rd, fmt.Errorf("Read with a buffer of %d returned n = %d", len(buf), n)
		}
		if err == io.EOF {
			if n != 0 {
				return rd, fmt.Errorf("Read returned io.EOF with n = %d after %d records, want n = 0", n, len(rd.recs))
			}
			break
		}
		if err != nil {
			return rd, fmt.Errorf("Read after %d records: %w", len(rd.recs), err)
		}
		if n == 0 {
			if idle++; idle > maxIdleReads {
				return rd, fmt.Errorf("Read returned 0, nil %d times in a row after %d records: no progress and no io.EOF", idle, len(rd.recs))
			}
			continue
		}
		idle = 0
		rd.recs = append(rd.recs, buf[:n]...)
		if len(rd.recs) > limit {
			return rd, fmt.Errorf("read more than %d records without io.EOF; the source must be bounded and yield only the wanted records", limit)
		}
		rd.steps = append(rd.steps, step{len(rd.recs), r.Position()})
	}
	rd.end = r.Position()
	for i := range 3 {
		n, err := r.Read(ctx, buf)
		if n != 0 || err != io.EOF {
			return rd, fmt.Errorf("Read #%d after io.EOF returned %d, %v; want 0, io.EOF", i+1, n, err)
		}
	}
	return rd, nil
}

// readN reads exactly k records from r (with buffers of at most bufSize),
// failing if EOF comes first.
func readN[T any](ctx context.Context, r connector.Reader[T], bufSize, k int) ([]T, error) {
	out := make([]T, 0, k)
	buf := make([]T, bufSize)
	idle := 0
	for len(out) < k {
		b := buf[:min(bufSize, k-len(out))]
		n, err := r.Read(ctx, b)
		if n < 0 || n > len(b) {
			return out, fmt.Errorf("Read with a buffer of %d returned n = %d", len(b), n)
		}
		if err != nil {
			return out, fmt.Errorf("Read after %d of %d records: %w", len(out), k, err)
		}
		if n == 0 {
			if idle++; idle > maxIdleReads {
				return out, fmt.Errorf("Read returned 0, nil %d times in a row after %d records", idle, len(out))
			}
			continue
		}
		idle = 0
		out = append(out, buf[:n]...)
	}
	return out, nil
}

// expectEOF checks that the next Read of r reports io.EOF.
func expectEOF[T any](ctx context.Context, r connector.Reader[T], bufSize, total int) error {
	buf := make([]T, bufSize)
	for idle := 0; idle <= maxIdleReads; idle++ {
		n, err := r.Read(ctx, buf)
		switch {
		case n > 0:
			return fmt.Errorf("read %s after all %d records, want io.EOF", show(buf[0]), total)
		case err == io.EOF:
			return nil
		case err != nil:
			return fmt.Errorf("Read after all %d records: %w", total, err)
		}
	}
	return fmt.Errorf("Read returned 0, nil %d times in a row after all %d records, want io.EOF", maxIdleReads+1, total)
}

// openRead opens subtask s of n at pos, reads it to EOF and closes it.
func openRead[T any](ctx context.Context, src connector.Source[T], n, s int, pos connector.Position, bufSize, limit int) (reading[T], error) {
	r, err := src.Open(ctx, info(n, s), pos)
	if err != nil {
		return reading[T]{}, fmt.Errorf("Open at position %s: %w", fmtPos(pos), err)
	}
	if r == nil {
		return reading[T]{}, fmt.Errorf("Open at position %s returned a nil Reader", fmtPos(pos))
	}
	rd, err := readToEOF(ctx, r, bufSize, limit)
	if cerr := r.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("Close after io.EOF: %w", cerr)
	}
	return rd, err
}

// readAll reads all n subtasks from the beginning concurrently.
func readAll[T any](ctx context.Context, src connector.Source[T], n, bufSize, limit int) ([][]T, error) {
	out := make([][]T, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for s := range n {
		wg.Go(func() {
			defer recoverTo(&errs[s], s, n)
			rd, err := openRead(ctx, src, n, s, nil, bufSize, limit)
			out[s] = rd.recs
			if err != nil {
				errs[s] = subtaskErr(s, n, "%v", err)
			}
		})
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// ReadAll opens all parallelism subtasks of a bounded source from the
// beginning, reads them concurrently to io.EOF and returns each subtask's
// records. It is a helper for connector tests.
func ReadAll[T any](ctx context.Context, src connector.Source[T], parallelism int) ([][]T, error) {
	return readAll(ctx, src, parallelism, readBufSize, int(^uint(0)>>1))
}

// ReadSome opens subtask i of n of src at pos, reads up to limit records
// (all, to io.EOF, if limit < 0) in reads of at most batch records, and
// returns them with the reader's position after them. It is a helper for
// connector tests, such as those of moving positions to another
// parallelism (connector.Rescaler); any error but io.EOF fails t.
func ReadSome[T any](t testing.TB, src connector.Source[T], i, n int, pos connector.Position, limit, batch int) ([]T, connector.Position) {
	t.Helper()
	r, err := src.Open(context.Background(), connector.SubtaskInfo{Subtask: i, Parallelism: n}, pos)
	if err != nil {
		t.Fatalf("open %d of %d at %x: %v", i, n, pos, err)
	}
	defer r.Close()
	var got []T
	buf := make([]T, batch)
	for limit < 0 || len(got) < limit {
		b := buf
		if limit >= 0 {
			b = buf[:min(len(buf), limit-len(got))]
		}
		k, err := r.Read(context.Background(), b)
		got = append(got, b[:k]...)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return got, r.Position()
}

// CheckSplit checks how a bounded source splits its input across
// parallelism subtasks. It reads all subtasks concurrently to io.EOF, twice,
// and checks that
//   - together they yield exactly want as a multiset: nothing missing,
//     nothing twice, nothing else;
//   - the split is deterministic: both reads give each subtask the same
//     sequence;
//   - Read honours its contract: 0 <= n <= len(buf), io.EOF only with n == 0,
//     io.EOF again on every Read after it, and Close after io.EOF succeeds.
func CheckSplit[T comparable](ctx context.Context, src connector.Source[T], want []T, parallelism int) error {
	limit := len(want) + 1
	first, err := readAll(ctx, src, parallelism, readBufSize, limit)
	if err != nil {
		return err
	}
	if d := DiffMultiset(first, want); d != "" {
		return fmt.Errorf("parallelism %d: subtasks together do not yield the wanted records: %s", parallelism, d)
	}
	second, err := readAll(ctx, src, parallelism, readBufSize, limit)
	if err != nil {
		return fmt.Errorf("second read: %w", err)
	}
	for s := range parallelism {
		if d := DiffSequence(second[s], first[s]); d != "" {
			return subtaskErr(s, parallelism, "split is not deterministic: second read %s", d)
		}
	}
	return nil
}

// CheckRewind checks the Position contract of a bounded source for every
// subtask of parallelism: reopening at a Position resumes with the next
// record, skipping none and repeating none. For each subtask and for buffer
// sizes 1, 7 and 64 it
//   - reads from the beginning to io.EOF, taking Position after every Read,
//     and checks the sequence does not depend on the buffer size;
//   - reopens at the Position taken before the first Read, at the one taken
//     at io.EOF, and at a few taken in between (chosen with seed), keeping
//     the Positions after the reader moved on and was closed, and checks
//     each continuation equals the rest of the sequence;
//   - reads a random number of records, takes Position, closes, reopens
//     there, and repeats until io.EOF, and checks the pieces add up to the
//     whole sequence.
//
// want is the whole input, used only to bound how much is read.
func CheckRewind[T comparable](ctx context.Context, src connector.Source[T], want []T, parallelism int, seed uint64) error {
	limit := len(want) + 1
	rng := rand.New(rand.NewPCG(seed, uint64(parallelism)))
	for s := range parallelism {
		var ref []T
		for _, bs := range rewindBufSizes {
			rd, err := openRead(ctx, src, parallelism, s, nil, bs, limit)
			if err != nil {
				return subtaskErr(s, parallelism, "buffer %d: %v", bs, err)
			}
			if ref == nil {
				ref = rd.recs
			} else if d := DiffSequence(rd.recs, ref); d != "" {
				return subtaskErr(s, parallelism, "sequence depends on the buffer size: with buffer %d it %s compared to buffer %d", bs, d, rewindBufSizes[0])
			}
			cuts := []step{{0, rd.start}, {len(rd.recs), rd.end}}
			for range min(3, len(rd.steps)) {
				cuts = append(cuts, rd.steps[rng.IntN(len(rd.steps))])
			}
			for _, c := range cuts {
				if err := checkResume(ctx, src, parallelism, s, c, ref, bs, limit); err != nil {
					return err
				}
			}
			if err := checkChained(ctx, src, parallelism, s, ref, bs, limit, rng); err != nil {
				return err
			}
		}
	}
	return nil
}

func describeCut(c step, total int) string {
	switch c.count {
	case 0:
		return "taken before the first Read"
	case total:
		return fmt.Sprintf("taken at io.EOF after %d records", total)
	}
	return fmt.Sprintf("taken after %d of %d records", c.count, total)
}

// checkResume reopens subtask s at a stored position and compares the
// continuation with ref.
func checkResume[T comparable](ctx context.Context, src connector.Source[T], n, s int, c step, ref []T, bs, limit int) error {
	rd, err := openRead(ctx, src, n, s, c.pos, bs, limit)
	if err != nil {
		return subtaskErr(s, n, "reopened at position %s (%s, buffer %d): %v", fmtPos(c.pos), describeCut(c, len(ref)), bs, err)
	}
	if d := DiffSequence(rd.recs, ref[c.count:]); d != "" {
		return subtaskErr(s, n, "reopened at position %s (%s, buffer %d): continuation %s%s",
			fmtPos(c.pos), describeCut(c, len(ref)), bs, d, hint(rd.recs, ref, c.count))
	}
	return nil
}

// hint explains a wrong continuation in terms of the whole sequence: did it
// restart too early (repeating records) or too late (skipping some)?
func hint[T comparable](cont, ref []T, at int) string {
	if len(cont) == 0 {
		return ""
	}
	for d := 1; d <= at; d++ {
		if seqEqual(cont, ref[at-d:]) {
			return fmt.Sprintf("; it resumed %d record(s) early, repeating %s", d, show(ref[at-d]))
		}
	}
	for d := 1; at+d <= len(ref); d++ {
		if seqEqual(cont, ref[at+d:]) {
			return fmt.Sprintf("; it resumed %d record(s) late, skipping %s", d, show(ref[at]))
		}
	}
	return ""
}

func seqEqual[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// checkChained reads subtask s in random pieces, closing and reopening at
// Position between pieces.
func checkChained[T comparable](ctx context.Context, src connector.Source[T], n, s int, ref []T, bs, limit int, rng *rand.Rand) error {
	var got []T
	var pos connector.Position
	for piece := 0; ; piece++ {
		k := 0
		if rest := len(ref) - len(got); rest > 0 {
			k = rng.IntN(min(rest, max(2*bs+3, len(ref)/8)) + 1)
		}
		r, err := src.Open(ctx, info(n, s), pos)
		if err != nil {
			return subtaskErr(s, n, "chained rewind, piece %d: Open at position %s after %d records: %v", piece, fmtPos(pos), len(got), err)
		}
		recs, err := readN(ctx, r, bs, k)
		got = append(got, recs...)
		if err == nil && len(got) == len(ref) {
			err = expectEOF(ctx, r, bs, len(ref))
		}
		if err != nil {
			r.Close()
			if d := DiffSequence(got, ref[:min(len(got), len(ref))]); d != "" {
				err = fmt.Errorf("%v; before that the pieces so far %s", err, d)
			}
			return subtaskErr(s, n, "chained rewind (buffer %d), piece %d after reopening at position %s: %v", bs, piece, fmtPos(pos), err)
		}
		if d := DiffSequence(got, ref[:len(got)]); d != "" {
			r.Close()
			return subtaskErr(s, n, "chained rewind (buffer %d): piece %d, read after reopening at position %s taken after %d records, %s",
				bs, piece, fmtPos(pos), len(got)-len(recs), d)
		}
		pos = r.Position()
		if err := r.Close(); err != nil {
			return subtaskErr(s, n, "chained rewind: Close: %v", err)
		}
		if len(got) == len(ref) {
			return nil
		}
	}
}

// CheckBadPositions checks that opening subtask 0 of 1 at each of the given
// corrupt positions fails with an error rather than panicking or reading.
func CheckBadPositions[T any](ctx context.Context, src connector.Source[T], bad []connector.Position) error {
	for _, p := range bad {
		err := func() (err error) {
			defer func() {
				if e := recover(); e != nil {
					err = fmt.Errorf("Open at corrupt position %s panicked: %v", fmtPos(p), e)
				}
			}()
			r, oerr := src.Open(ctx, info(1, 0), p)
			if oerr == nil {
				r.Close()
				return fmt.Errorf("Open at corrupt position %s succeeded, want an error", fmtPos(p))
			}
			return nil
		}()
		if err != nil {
			return err
		}
	}
	return nil
}
