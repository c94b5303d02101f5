package connectortest

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weir-stream/weir/connector"
)

// bug selects a defect of sliceSource.
type bug int

const (
	noBug           bug = iota
	repeatOnReopen      // resumes one record early
	skipOnReopen        // resumes one record late
	everySubtask        // every subtask reads the whole input
	unstableOrder       // a subtask's order changes from one fresh Open to the next
	recordsWithEOF      // returns the last records together with io.EOF
	restartAfterEOF     // Read after io.EOF starts over
	aliasedPosition     // Position returns a slice the reader later overwrites
	acceptsGarbage      // Open accepts any position
	dropsLast           // one subtask never yields its last record
)

// sliceSource is a strided source over a slice, with an optional bug.
type sliceSource struct {
	items []string
	bug   bug
	mu    sync.Mutex
	opens map[[2]int]int // fresh opens per parallelism and subtask
}

func (s *sliceSource) Open(_ context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[string], error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	r := &sliceReader{src: s, stride: info.Parallelism, next: info.Subtask}
	if s.bug == everySubtask {
		r.stride, r.next = 1, 0
	}
	if s.bug == unstableOrder && pos == nil {
		s.mu.Lock()
		if s.opens == nil {
			s.opens = map[[2]int]int{}
		}
		key := [2]int{info.Parallelism, info.Subtask}
		s.opens[key]++
		r.reverse = s.opens[key]%2 == 0
		s.mu.Unlock()
	}
	if pos != nil {
		i, n := binary.Uvarint(pos)
		if n != len(pos) && s.bug != acceptsGarbage {
			return nil, errors.New("corrupt position")
		}
		r.next = int(i)
		if i > 0 && s.bug == repeatOnReopen {
			r.next -= r.stride
		}
		if i > 0 && s.bug == skipOnReopen {
			r.next += r.stride
		}
	}
	return r, nil
}

type sliceReader struct {
	src          *sliceSource
	stride, next int
	pos          []byte
	eof          bool
	reverse      bool
}

func (r *sliceReader) Read(_ context.Context, buf []string) (int, error) {
	end := len(r.src.items)
	if r.src.bug == dropsLast && r.next%r.stride == 0 {
		end--
	}
	if r.eof && r.src.bug == restartAfterEOF {
		r.next, r.eof = r.next%r.stride, false
	}
	k := 0
	for k < len(buf) && r.next < end {
		buf[k] = r.src.items[r.next]
		if r.reverse {
			buf[k] = r.src.items[len(r.src.items)-1-r.next]
		}
		r.next += r.stride
		k++
	}
	if r.next >= end && (k == 0 || r.src.bug == recordsWithEOF) {
		r.eof = true
		return k, io.EOF
	}
	return k, nil
}

func (r *sliceReader) Position() connector.Position {
	if r.src.bug == aliasedPosition {
		r.pos = binary.AppendUvarint(r.pos[:0], uint64(r.next))
		return r.pos
	}
	return binary.AppendUvarint(nil, uint64(r.next))
}

func (r *sliceReader) Close() error { return nil }

func items(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "r" + string(rune('A'+i%26)) + strings.Repeat("x", i/26)
	}
	return out
}

func TestGoodSource(t *testing.T) {
	for _, n := range []int{0, 1, 5, 40} {
		want := items(n)
		TestSource(t, SourceCase[string]{
			New:          func(*testing.T) connector.Source[string] { return &sliceSource{items: want} },
			Want:         want,
			Parallelism:  []int{1, 2, 3, 7},
			BadPositions: []connector.Position{{0x80}},
		})
	}
}

// checkAll runs every source check and joins the errors.
func checkAll(ctx context.Context, src connector.Source[string], want []string) error {
	var errs []error
	for _, n := range []int{1, 2, 3} {
		errs = append(errs, CheckSplit(ctx, src, want, n), CheckRewind(ctx, src, want, n, 1))
	}
	errs = append(errs, CheckBadPositions(ctx, src, []connector.Position{{0x80}}))
	return errors.Join(errs...)
}

func TestBrokenSources(t *testing.T) {
	want := items(30)
	for _, tc := range []struct {
		name string
		bug  bug
		msg  string // part of the expected error
	}{
		{"repeat", repeatOnReopen, `(taken at io.EOF after 10 records, buffer 1): continuation got 1 records, want 0: extra from #0: "rBx"; it resumed 1 record(s) early, repeating "rBx"`},
		{"skip", skipOnReopen, "it resumed 1 record(s) late, skipping"},
		{"every-subtask", everySubtask, `"rA" read 2 times, want 1: at subtask 0 #0, subtask 1 #0`},
		{"unstable", unstableOrder, "subtask 0 of 1: split is not deterministic: second read differs at #0: got \"rDx\", want \"rA\""},
		{"records-with-eof", recordsWithEOF, "Read returned io.EOF with n = "},
		{"restart-after-eof", restartAfterEOF, "Read #1 after io.EOF returned"},
		{"aliased-position", aliasedPosition, "reopened at position"},
		{"accepts-garbage", acceptsGarbage, "Open at corrupt position 80 succeeded"},
		{"drops-last", dropsLast, `missing 1 distinct records:` + "\n\t" + `"rDx" (got 0 of 1)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkAll(t.Context(), &sliceSource{items: want, bug: tc.bug}, want)
			if err == nil {
				t.Fatal("the suite passed a broken source")
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error does not mention %q:\n%v", tc.msg, err)
			}
		})
	}
}

// TestSuiteFailsBrokenSource checks that the *testing.T wrapper really fails
// a test: it runs TestSource on a broken source in a child process.
func TestSuiteFailsBrokenSource(t *testing.T) {
	if os.Getenv("CONNECTORTEST_CHILD") == "1" {
		want := items(10)
		TestSource(t, SourceCase[string]{
			New:  func(*testing.T) connector.Source[string] { return &sliceSource{items: want, bug: repeatOnReopen} },
			Want: want,
		})
		return
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestSuiteFailsBrokenSource$", "-test.v")
	cmd.Env = append(os.Environ(), "CONNECTORTEST_CHILD=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("child test: want a failing exit, got %v\n%s", err, out)
	}
	for _, want := range []string{"--- FAIL: TestSuiteFailsBrokenSource/rewind/n=1", "--- PASS: TestSuiteFailsBrokenSource/split/n=1", "resumed 1 record(s) early"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("child output lacks %q:\n%s", want, out)
		}
	}
}

// memSink keeps what each subtask wrote, with an optional bug.
type memSink struct {
	mu   sync.Mutex
	subs map[int][]string
	bug  string
}

func (s *memSink) Open(_ context.Context, info connector.SubtaskInfo) (connector.Writer[string], error) {
	return &memWriter{sink: s, sub: info.Subtask}, nil
}

func (s *memSink) all() []string {
	var out []string
	for _, seq := range s.bySubtask() {
		out = append(out, seq...)
	}
	return out
}

func (s *memSink) bySubtask() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]string
	for i := 0; i < len(s.subs); i++ {
		out = append(out, slices.Clone(s.subs[i]))
	}
	return out
}

type memWriter struct {
	sink    *memSink
	sub     int
	pending [][]string
}

func (w *memWriter) Write(_ context.Context, batch []string) error {
	switch w.sink.bug {
	case "retain":
		w.pending = append(w.pending, batch)
		return nil
	case "reverse":
		batch = slices.Clone(batch)
		slices.Reverse(batch)
	}
	w.pending = append(w.pending, slices.Clone(batch))
	return nil
}

func (w *memWriter) Flush(context.Context) error {
	if w.sink.bug == "lose-unflushed" {
		w.pending = nil
		return nil
	}
	w.sink.mu.Lock()
	defer w.sink.mu.Unlock()
	if w.sink.subs == nil {
		w.sink.subs = map[int][]string{}
	}
	for _, b := range w.pending {
		w.sink.subs[w.sub] = append(w.sink.subs[w.sub], b...)
	}
	w.pending = nil
	return nil
}

func (w *memWriter) Close() error { return nil }

func TestGoodSink(t *testing.T) {
	TestSink(t, SinkCase[string]{
		New:               func(*testing.T) connector.Sink[string] { return &memSink{} },
		ReadBack:          func(_ *testing.T, s connector.Sink[string]) []string { return s.(*memSink).all() },
		ReadBackBySubtask: func(_ *testing.T, s connector.Sink[string]) [][]string { return s.(*memSink).bySubtask() },
		Records:           items(200),
		Parallelism:       []int{1, 2, 3, 5},
	})
}

func TestBrokenSinks(t *testing.T) {
	records := items(50)
	for _, tc := range []struct{ bug, msg string }{
		{"retain", `"" read `},
		{"reverse", "subtask 0 of 2: sink output of this subtask differs at #1"},
		{"lose-unflushed", "missing "},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			s := &memSink{bug: tc.bug}
			err := CheckSink(t.Context(), s, records, 2,
				func() ([]string, error) { return s.all(), nil },
				func() ([][]string, error) { return s.bySubtask(), nil })
			if err == nil {
				t.Fatal("the suite passed a broken sink")
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error does not mention %q:\n%v", tc.msg, err)
			}
		})
	}
}

func TestDiffMultiset(t *testing.T) {
	got := DiffMultiset([][]int{{1, 2, 2}, {4}}, []int{1, 2, 3})
	want := "got 4 records, want 3\nmissing 1 distinct records:\n\t3 (got 0 of 1)\n" +
		"unexpected or repeated 2 distinct records:\n\t2 read 2 times, want 1: at subtask 0 #1, subtask 0 #2\n\t4 read 1 times, want 0: at subtask 1 #0"
	if got != want {
		t.Errorf("DiffMultiset:\n%s\nwant:\n%s", got, want)
	}
	if d := DiffMultiset([][]int{{3, 1}, {2}}, []int{1, 2, 3}); d != "" {
		t.Errorf("equal multisets differ: %s", d)
	}
}
