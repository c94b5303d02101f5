package tables

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/connectors/file"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
	"github.com/weir-stream/weir/nexmark/queries"
)

// allTypes is a table with a column of every type, one of them nested.
func allTypes(opts map[string]string) Table {
	col := func(t types.Type, path ...string) Column { return Column{Path: path, Type: t} }
	o := map[string]string{}
	for k, v := range opts {
		o[k] = v
	}
	return Table{Name: "t", Options: o, Columns: []Column{
		col(types.IntType, "i"),
		col(types.BigIntType, "b"),
		col(types.BooleanType, "ok"),
		col(types.DoubleType, "d"),
		col(types.DecimalOf(10, 2), "price"),
		col(types.VarcharType, "s"),
		col(types.TimestampType, "p", "at"),
		col(types.IntervalType, "p", "gap"),
		col(types.BigIntType, "n"),
	}}
}

func allTypesRow(op row.Op) row.Row {
	return row.Row{Op: op, V: []row.Value{row.Int(-7), row.BigInt(1 << 40), row.Bool(true), row.Double(0.1),
		row.Decimal(-5), row.String("a\"b\\<\n\x01é"), row.Timestamp(1704067200000), row.Interval(1500), row.Null()}}
}

func TestJSONEncodesEachTypeAsDocumented(t *testing.T) {
	enc := &jsonEncoder{cols: allTypes(nil).Columns, changelog: true}
	got := string(enc.appendRow(nil, allTypesRow(row.UpdateBefore)))
	want := `{"op":"-U","i":-7,"b":1099511627776,"ok":true,"d":0.1,"price":-0.05,"s":"a\"b\\<\n\u0001é","p":{"at":1704067200000,"gap":1500},"n":null}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	for _, c := range []struct {
		u    int64
		s    int32
		want string
	}{{12345, 2, "123.45"}, {5, 3, "0.005"}, {-120, 1, "-12.0"}, {7, 0, "7"}, {math.MinInt64, 2, "-92233720368547758.08"}} {
		if got := string(appendDecimal(nil, c.u, c.s)); got != c.want {
			t.Errorf("decimal %d at scale %d: %s, want %s", c.u, c.s, got, c.want)
		}
	}
	for _, f := range []float64{1, 1e21, 1e-7, 123456.789, -0.0} {
		b, _ := json.Marshal(f)
		if got := string(appendJSONFloat(nil, f)); got != string(b) {
			t.Errorf("double %v: %s, want %s", f, got, b)
		}
	}
	if got := string(appendJSONFloat(nil, math.Inf(-1))); got != `"-Infinity"` {
		t.Errorf("-Inf: %s", got)
	}
}

func TestJSONStringsEncodeAsEncodingJSONWithoutHTMLEscaping(t *testing.T) {
	for _, s := range []string{"", "plain", "<&>", "\u2028\u2029", "\xff\xfe", "tab\there", "\x7f", "日本"} {
		var b strings.Builder
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		e.Encode(s)
		if got, want := string(appendJSONString(nil, s)), strings.TrimSuffix(b.String(), "\n"); got != want {
			t.Errorf("%q: %s, want %s", s, got, want)
		}
	}
}

func TestJSONDecodesWhatItEncodesAndFlinksLenientForms(t *testing.T) {
	cols := allTypes(nil).Columns
	enc, dec := &jsonEncoder{cols: cols}, &jsonDecoder{cols: cols}
	in := allTypesRow(row.Insert)
	var got row.Row
	if err := dec.decode(enc.appendRow(nil, in), &got); err != nil {
		t.Fatal(err)
	}
	if !row.EqualValues(got, in) {
		t.Fatalf("got %v, want %v", got.V, in.V)
	}
	lenient := `{"i":"3","b":4,"ok":"TRUE","d":"NaN","price":1.005,"s":{"x":1},"p":{"at":"2024-01-01 00:00:01.5"},"extra":[1]}`
	if err := dec.decode([]byte(lenient), &got); err != nil {
		t.Fatal(err)
	}
	want := []row.Value{row.Int(3), row.BigInt(4), row.Bool(true), row.Double(math.NaN()), row.Decimal(101),
		row.String(`{"x":1}`), row.Timestamp(1704067201500), row.Null(), row.Null()}
	if !row.EqualValues(got, row.Row{V: want}) {
		t.Fatalf("got %v, want %v", got.V, want)
	}
	for _, bad := range []string{`{"i":1.5}`, `{"i":"x"}`, `{"p":3}`, `[1]`, `{"price":1e30}`, `{"p":{"at":"yesterday"}}`, `{"i":`} {
		if err := dec.decode([]byte(bad), &got); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}

// writeRows runs a pipeline writing rows to sink at parallelism 2.
func writeRows(t *testing.T, sink connector.Sink[row.Row], rows ...row.Row) {
	t.Helper()
	p := weir.NewPipeline(weir.WithParallelism(2))
	weir.To(weir.FromSource(p, "rows", collection.Of(rows...)), "out", sink)
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestFilesystemSinkWritesRowsTheSourceReadsBack(t *testing.T) {
	dir := t.TempDir()
	tb := allTypes(map[string]string{"connector": "filesystem", "path": dir, "format": "json"})
	sink, err := NewSink(tb, false)
	if err != nil {
		t.Fatal(err)
	}
	var rows []row.Row
	for i := range 50 {
		r := allTypesRow(row.Insert)
		r.V[1] = row.BigInt(int64(i))
		rows = append(rows, r)
	}
	writeRows(t, sink, rows...)
	src, err := NewSource(tb, []int{5, 1, 6})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, src.Source, 3)
	if len(got) != len(rows) {
		t.Fatalf("read %d rows, wrote %d", len(got), len(rows))
	}
	slices.SortFunc(got, func(a, b row.Row) int { return row.Compare(a.V[1], b.V[1]) })
	for i, r := range got {
		want := row.Row{V: []row.Value{rows[i].V[5], rows[i].V[1], rows[i].V[6]}}
		if !row.EqualValues(r, want) {
			t.Fatalf("row %d: %v, want %v", i, r.V, want.V)
		}
	}
}

func TestFilesystemChangelogIsWhatTheNexmarkReadersApply(t *testing.T) {
	dir := t.TempDir()
	tb := allTypes(map[string]string{"connector": "filesystem", "path": dir, "format": "json"})
	sink, err := NewSink(tb, true)
	if err != nil {
		t.Fatal(err)
	}
	a, b := allTypesRow(row.Insert), allTypesRow(row.UpdateBefore)
	b2, c, c2 := allTypesRow(row.UpdateAfter), allTypesRow(row.Insert), allTypesRow(row.Delete)
	b.V[0], b2.V[0], c.V[0], c2.V[0] = row.Int(1), row.Int(2), row.Int(3), row.Int(3)
	b0 := b
	b0.Op = row.Insert
	p := weir.NewPipeline(weir.WithParallelism(1))
	weir.To(weir.FromSource(p, "rows", collection.Of(a, b0, b, b2, c, c2)), "out", sink)
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines, err := file.ReadLines(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !queries.IsChangelog(lines) {
		t.Fatalf("not a changelog: %q", lines)
	}
	final, err := queries.ApplyChangelog(lines)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := queries.ApplyChangelog(slices.Collect(func(yield func(string) bool) {
		enc := &jsonEncoder{cols: tb.Columns, changelog: true}
		yield(string(enc.appendRow(nil, a)))
		yield(string(enc.appendRow(nil, b2)))
	}))
	if len(final) != 2 || !slices.Equal(final, want) {
		t.Fatalf("final table %q, want %q", final, want)
	}
}

// A stateless job from the nexmark table to the filesystem table, run
// exactly-once with injected failures, writes what the failure-free run
// writes.
func TestNexmarkToFilesystemIsExactlyOnceUnderFailures(t *testing.T) {
	src := nexmarkTable(map[string]string{"events.num": "20000", "first-event.rate": "1000", "next-event.rate": "1000", "generators": "4"})
	cols := colsNamed(t, src, "event_type", "bid.price", "person.name", "auction.dateTime")
	out := func(dir string) Table {
		c := []Column{src.Columns[cols[0]], src.Columns[cols[1]], src.Columns[cols[2]], src.Columns[cols[3]]}
		return Table{Name: "out", Columns: c, Options: map[string]string{"connector": "filesystem", "path": dir, "format": "json"}}
	}
	run := func(dir string, failures bool) int {
		opts := []weir.Option{weir.WithParallelism(2)}
		if failures {
			opts = append(opts, weir.WithGuarantee(weir.ExactlyOnce),
				weir.WithCheckpoints(weir.CheckpointConfig{Interval: 20 * time.Millisecond}),
				weir.WithInjectedFailures(2, 7), weir.WithFailureWindow(60*time.Millisecond),
				weir.WithRestartStrategy("fixed-delay", 100, time.Millisecond, 0, 0))
		}
		p := weir.NewPipeline(opts...)
		s, err := NewSource(src, cols)
		if err != nil {
			t.Fatal(err)
		}
		sink, err := NewSink(out(dir), false)
		if err != nil {
			t.Fatal(err)
		}
		weir.To(weir.FromSource(p, "events", s.Source), "out", sink)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := p.Run(ctx); err != nil {
			t.Fatal(err)
		}
		return p.Report().Injected
	}
	lines := func(dir string) []string {
		l, err := file.ReadLines(dir)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(l)
		return l
	}
	clean, faulty := t.TempDir(), t.TempDir()
	run(clean, false)
	if n := run(faulty, true); n == 0 {
		t.Fatal("no failure was injected: the test proved nothing")
	}
	want, got := lines(clean), lines(faulty)
	if len(want) != 20000 || !slices.Equal(got, want) {
		t.Fatalf("with failures %d lines, without %d (of 20000)", len(got), len(want))
	}
}

func TestFilesystemSourceFailsOnAMalformedLineOrSkipsItWhenTold(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "in.jsonl")
	os.WriteFile(path, []byte("{\"b\":1}\n{\"b\":\"x\"}\n\n{\"b\":3}\n"), 0o666)
	tb := allTypes(map[string]string{"connector": "filesystem", "path": dir, "format": "json"})
	src, err := NewSource(tb, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	r, err := src.Source.Open(context.Background(), connector.SubtaskInfo{Parallelism: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]row.Row, 10)
	for err == nil {
		_, err = r.Read(context.Background(), buf)
	}
	var merr *connector.MalformedError
	if !errors.As(err, &merr) || !strings.Contains(err.Error(), "in.jsonl:2") || !strings.Contains(err.Error(), "column b") {
		t.Fatalf("got %v, want a malformed record at in.jsonl:2 naming column b", err)
	}
	tb.Options["json.ignore-parse-errors"] = "true"
	if src, err = NewSource(tb, []int{1}); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, src.Source, 1)
	if len(got) != 2 || got[0].V[0] != row.BigInt(1) || got[1].V[0] != row.BigInt(3) {
		t.Fatalf("skipping: got %v", got)
	}
}

func TestFilesystemRejectsBadOptionsFormatsAndColumns(t *testing.T) {
	dir := t.TempDir()
	fs := func(kv ...string) Table {
		tb := allTypes(map[string]string{"connector": "filesystem", "path": dir, "format": "json"})
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(tb.Options, kv[i])
			} else {
				tb.Options[kv[i]] = kv[i+1]
			}
		}
		return tb
	}
	meta := fs()
	meta.Columns = append(meta.Columns, Column{Path: []string{"ts"}, Type: types.TimestampType, Metadata: "timestamp"})
	for _, c := range []struct {
		name string
		tb   Table
		want error
		says string
	}{
		{"missing path", fs("path", ""), ErrOption, `missing required option "path"`},
		{"missing format", fs("format", ""), ErrOption, `"format"`},
		{"avro", fs("format", "avro"), ErrFormat, `format "avro" is not supported yet`},
		{"unknown format", fs("format", "xml"), ErrFormat, `"xml"`},
		{"bad boolean", fs("json.ignore-parse-errors", "yes"), ErrOption, `json.ignore-parse-errors`},
		{"unknown option", fs("sink.rolling-policy.file-size", "1MB"), ErrOption, `sink.rolling-policy.file-size`},
		{"metadata column", meta, ErrColumn, "column ts"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewSink(c.tb, false)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "table t") {
				t.Fatalf("sink: %v, want %v saying %s", err, c.want, c.says)
			}
			cols := []int{0}
			if c.name == "metadata column" {
				cols = []int{len(c.tb.Columns) - 1}
			}
			if _, err := NewSource(c.tb, cols); !errors.Is(err, c.want) {
				t.Fatalf("source: %v, want %v", err, c.want)
			}
		})
	}
	if _, err := NewSource(fs("path", filepath.Join(dir, "absent")), nil); !errors.Is(err, ErrOption) || !strings.Contains(err.Error(), "absent") {
		t.Fatalf("absent path: %v", err)
	}
}

// The filesystem sink's writers commit with checkpoints (the file sink's
// two-phase commit passes through the row adapter).
func TestFilesystemSinkWritersAreCommitters(t *testing.T) {
	sink, err := NewSink(allTypes(map[string]string{"connector": "filesystem", "path": t.TempDir(), "format": "json"}), false)
	if err != nil {
		t.Fatal(err)
	}
	w, err := sink.Open(context.Background(), connector.SubtaskInfo{Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, ok := w.(connector.Committer); !ok {
		t.Fatalf("%T is not a connector.Committer", w)
	}
}
