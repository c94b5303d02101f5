package file

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connector/connectortest"
)

type event struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

func jsonl(events ...event) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "{\"id\":%d,\"name\":%q}\n", e.ID, e.Name)
	}
	return b.String()
}

func someEvents(from, to int) []event {
	var out []event
	for i := from; i < to; i++ {
		out = append(out, event{i, strings.Repeat("n", i%7)})
	}
	return out
}

func TestJSONLinesConformance(t *testing.T) {
	dir := t.TempDir()
	paths := []string{
		writeFile(t, dir, "a.jsonl", jsonl(someEvents(0, 60)...)),
		writeFile(t, dir, "b.jsonl", "\n  \n"+strings.ReplaceAll(jsonl(someEvents(60, 80)...), "\n", "\r\n\n")),
		writeFile(t, dir, "empty.jsonl", ""),
		writeFile(t, dir, "c.jsonl", `{"name":"last","id":80}`),
	}
	connectortest.TestSource(t, connectortest.SourceCase[event]{
		New:         func(*testing.T) connector.Source[event] { return JSONLines[event](JSONOptions{}, paths...) },
		Want:        append(someEvents(0, 80), event{80, "last"}),
		Parallelism: []int{1, 2, 3, 8},
	})
}

// malformedInput has bad lines at known places.
func malformedInput(t *testing.T) (paths []string, good []event, wheres []string) {
	dir := t.TempDir()
	var a strings.Builder
	a.WriteString(jsonl(someEvents(0, 30)...))
	badAt := a.Len()
	a.WriteString("{\"id\": oops}\n") // line 31
	a.WriteString(jsonl(someEvents(30, 50)...))
	bad2At := a.Len()
	a.WriteString("{\"id\":\"not a number\"}\r\n") // line 52
	a.WriteString(jsonl(someEvents(50, 60)...))
	pa := writeFile(t, dir, "events.jsonl", a.String())
	pb := writeFile(t, dir, "more.jsonl", "\n[1,2]") // line 2, no trailing newline
	good = someEvents(0, 60)
	wheres = []string{
		fmt.Sprintf("%s:31 (byte %d)", pa, badAt),
		fmt.Sprintf("%s:52 (byte %d)", pa, bad2At),
		pb + ":2 (byte 1)",
	}
	return []string{pa, pb}, good, wheres
}

func TestJSONLinesFail(t *testing.T) {
	paths, good, wheres := malformedInput(t)
	src := JSONLines[event](JSONOptions{}, paths...)
	r, err := src.Open(t.Context(), connector.SubtaskInfo{Parallelism: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]event, 100)
	n, err := r.Read(t.Context(), buf)
	if n != 30 || err != nil {
		t.Fatalf("first Read = %d, %v; want the 30 records before the bad line", n, err)
	}
	if d := connectortest.DiffSequence(buf[:n], good[:30]); d != "" {
		t.Errorf("records before the bad line: %s", d)
	}
	pos := r.Position()
	for range 2 {
		n, err = r.Read(t.Context(), buf)
		want := "malformed record at " + wheres[0] + ": json: cannot decode file.event: invalid character 'o' looking for beginning of value"
		if n != 0 || err == nil || err.Error() != want {
			t.Fatalf("Read = %d, %v\nwant 0, %s", n, err, want)
		}
	}
	var merr *connector.MalformedError
	if !errors.As(err, &merr) || !errors.Is(err, connector.ErrMalformed) || merr.Where != wheres[0] {
		t.Errorf("error %#v is not a MalformedError at %s", err, wheres[0])
	}
	if p := r.Position(); string(p) != string(pos) {
		t.Errorf("Position moved past the bad line: %x, want %x", []byte(p), []byte(pos))
	}

	// Every subtask that owns a bad line reports it at the right line, even
	// when its split starts mid-file.
	for n := 1; n <= 8; n++ {
		var got []string
		for s := range n {
			r, err := src.Open(t.Context(), connector.SubtaskInfo{Subtask: s, Parallelism: n}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for {
				_, err := r.Read(t.Context(), buf)
				if err == io.EOF {
					break
				}
				if errors.As(err, &merr) {
					got = append(got, merr.Where)
					// Resume after the bad line, as a user fixing it would.
					pos := r.(*parsedReader[event]).lr.position()
					r.Close()
					if r, err = src.Open(t.Context(), connector.SubtaskInfo{Subtask: s, Parallelism: n}, pos); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			r.Close()
		}
		if !slices.Equal(got, wheres) {
			t.Errorf("n=%d: malformed lines reported at\n%s\nwant\n%s", n, strings.Join(got, "\n"), strings.Join(wheres, "\n"))
		}
	}
}

func TestJSONLinesSkip(t *testing.T) {
	paths, good, wheres := malformedInput(t)
	for n := 1; n <= 8; n++ {
		var mu sync.Mutex
		var got []string
		var skipped atomic.Int64
		src := JSONLines[event](JSONOptions{
			OnMalformed: connector.Skip,
			Skipped:     &skipped,
			Malformed: func(e connector.MalformedError) {
				if !errors.Is(&e, connector.ErrMalformed) {
					t.Errorf("callback got %v", e)
				}
				mu.Lock()
				got = append(got, e.Where)
				mu.Unlock()
			},
		}, paths...)
		recs, err := connectortest.ReadAll(t.Context(), src, n)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if d := connectortest.DiffSequence(slices.Concat(recs...), good); d != "" {
			t.Errorf("n=%d: records %s", n, d)
		}
		sort.Strings(got)
		if !slices.Equal(got, wheres) || skipped.Load() != 3 {
			t.Errorf("n=%d: skipped %d lines at\n%s\nwant 3 at\n%s", n, skipped.Load(), strings.Join(got, "\n"), strings.Join(wheres, "\n"))
		}
	}
	// Skipping is deterministic, so the source still rewinds exactly.
	connectortest.TestSource(t, connectortest.SourceCase[event]{
		New: func(*testing.T) connector.Source[event] {
			return JSONLines[event](JSONOptions{OnMalformed: connector.Skip}, paths...)
		},
		Want: good,
	})
}

func TestJSONLinesZeroesBuffer(t *testing.T) {
	type rec struct {
		A int            `json:"a"`
		M map[string]int `json:"m"`
	}
	p := writeFile(t, t.TempDir(), "r.jsonl", `{"a":1,"m":{"x":1}}`+"\n"+`{"m":{"y":2}}`+"\n")
	r, err := JSONLines[rec](JSONOptions{}, p).Open(t.Context(), connector.SubtaskInfo{Parallelism: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	buf := []rec{{A: 7, M: map[string]int{"old": 1}}, {A: 7, M: map[string]int{"old": 1}}}
	r.Read(t.Context(), buf)
	if got := fmt.Sprint(buf); got != "[{1 map[x:1]} {0 map[y:2]}]" {
		t.Errorf("decoded %s; old buffer contents leaked in", got)
	}
}

// required is a record type with fields that must be present.
type required struct{ A, B int64 }

func (r *required) UnmarshalJSON(data []byte) error {
	var raw struct{ A, B *int64 }
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	if raw.A == nil || raw.B == nil {
		return errors.New("missing field")
	}
	*r = required{*raw.A, *raw.B}
	return nil
}

// A line that encoding/json would turn silently into a zero value or a
// replacement character is malformed: null, a record without a field its
// type requires, and bytes that are not UTF-8 (two distinct ones would
// decode to the same string).
func TestJSONLinesRejectsNullMissingFieldsAndInvalidUTF8(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "in.jsonl", "{\"A\":1,\"B\":2}\nnull\n{\"A\":3}\n{\"A\":4,\"B\":null}\n \"\xff\"\n{\"A\":5,\"B\":6}\n")
	var skipped []string
	src := JSONLines[required](JSONOptions{OnMalformed: connector.Skip, Malformed: func(e connector.MalformedError) { skipped = append(skipped, e.Error()) }}, path)
	r, err := src.Open(t.Context(), connector.SubtaskInfo{Parallelism: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]required, 10)
	n, err := r.Read(t.Context(), buf)
	if err != nil || !slices.Equal(buf[:n], []required{{1, 2}, {5, 6}}) {
		t.Fatalf("Read = %v, %v; want the two complete records", buf[:n], err)
	}
	want := []string{
		"malformed record at " + path + ":2 (byte 14): json: cannot decode file.required: the document is null",
		"malformed record at " + path + ":3 (byte 19): json: cannot decode file.required: missing field",
		"malformed record at " + path + ":4 (byte 27): json: cannot decode file.required: missing field",
		"malformed record at " + path + ":5 (byte 44): json: cannot decode file.required: invalid UTF-8 at byte 2 (\"\\xff\\\"\")",
	}
	if !slices.Equal(skipped, want) {
		t.Fatalf("skipped\n%s\nwant\n%s", strings.Join(skipped, "\n"), strings.Join(want, "\n"))
	}
}

func TestParsedLinesParsesEachLineWithTheGivenParserAndLocatesItsErrors(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "n.txt", "1\n\n22\nx\n333\n")
	parse := func(line []byte, v *int) error {
		if *v != 0 {
			return errors.New("parse was handed a used value")
		}
		if line[0] == 'x' {
			return errors.New("not a number")
		}
		*v = len(line)
		return nil
	}
	connectortest.TestSource(t, connectortest.SourceCase[int]{
		New: func(*testing.T) connector.Source[int] {
			return ParsedLines(Options{OnMalformed: connector.Skip}, parse, path)
		},
		Want:        []int{1, 2, 3},
		Parallelism: []int{1, 2},
	})
	r, err := ParsedLines(Options{}, parse, path).Open(t.Context(), connector.SubtaskInfo{Parallelism: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]int, 10)
	n, err := r.Read(t.Context(), buf)
	if n != 2 || err != nil {
		t.Fatalf("first read: %d, %v; want the two lines before the bad one", n, err)
	}
	_, err = r.Read(t.Context(), buf)
	var merr *connector.MalformedError
	if !errors.As(err, &merr) || !strings.Contains(merr.Where, "n.txt:4") {
		t.Fatalf("got %v, want a malformed record at n.txt:4", err)
	}
}
