package sql

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/file"
	"github.com/weir-stream/weir/internal/sql/naive"
	"github.com/weir-stream/weir/internal/sql/parse"
	"github.com/weir-stream/weir/internal/sql/plan"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// This file runs the reference tests: a script over bounded JSON files
// is run as a pipeline and evaluated by package naive from its
// unoptimized plan, and the two final tables must be equal.

// refCase is a script with one INSERT INTO a filesystem table, and the
// rows of its input tables. In the script ${NAME} is the path of input
// table NAME's file and ${out} the sink's directory.
type refCase struct {
	script string
	inputs map[string][]string
	// failures adds a run exactly-once under injected failures (for the
	// stateful features).
	failures bool
	// ordered marks a result that depends on the order rows arrive in
	// (FIRST_VALUE, LAST_VALUE), which only a single reader of the
	// input keeps: it runs at parallelism 1 only.
	ordered bool
}

// checkReference runs c at parallelism 1 and 2 (only 1 if c.ordered;
// and under failures if c.failures is set) and compares each run's final table with the naive
// evaluation's.
func checkReference(t *testing.T, c refCase) {
	t.Helper()
	dir := t.TempDir()
	vars := map[string]string{}
	for name, lines := range c.inputs {
		path := filepath.Join(dir, name+".json")
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o666); err != nil {
			t.Fatal(err)
		}
		vars[name] = path
	}
	want, cols := naiveTable(t, c, vars)
	if len(want) == 0 {
		t.Fatal("the reference gives no rows: the test would prove nothing")
	}
	t.Logf("the reference gives %d rows", len(want))
	run := func(what string, opts ...weir.Option) int {
		t.Helper()
		out := t.TempDir()
		vars["out"] = out
		s, err := Parse(c.script, Options{Vars: vars})
		if err != nil {
			t.Fatal(err)
		}
		p := weir.NewPipeline(opts...)
		if err := s.Build(p); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := p.Run(ctx); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		lines, err := file.ReadLines(out)
		if err != nil {
			t.Fatal(err)
		}
		diffTables(t, what, finalRows(t, lines, cols), want)
		t.Logf("%s: %d failures injected", what, p.Report().Injected)
		return p.Report().Injected
	}
	run("parallelism 1", weir.WithParallelism(1))
	if c.ordered {
		return
	}
	run("parallelism 2", weir.WithParallelism(2))
	if !c.failures {
		return
	}
	injected := 0
	for seed := uint64(1); seed <= 12 && injected == 0; seed++ {
		injected += run(fmt.Sprintf("exactly-once under failures (seed %d)", seed), weir.WithParallelism(2),
			weir.WithGuarantee(weir.ExactlyOnce),
			weir.WithCheckpoints(weir.CheckpointConfig{Interval: 20 * time.Millisecond}),
			weir.WithInjectedFailures(2, seed), weir.WithFailureWindow(60*time.Millisecond),
			weir.WithRestartStrategy("fixed-delay", 100, time.Millisecond, 0, 0))
	}
	if injected == 0 {
		t.Fatal("no failure was injected: the exactly-once run proved nothing")
	}
}

// naiveTable binds c's script unoptimized and evaluates its INSERT by
// brute force; it returns the final table and the sink's columns.
func naiveTable(t *testing.T, c refCase, vars map[string]string) ([]string, []plan.TableColumn) {
	t.Helper()
	vars["out"] = t.TempDir()
	stmts, err := parse.Parse(parse.Substitute(c.script, vars))
	if err != nil {
		t.Fatal(err)
	}
	prog, err := plan.BindUnoptimized(stmts, newCatalog())
	if err != nil {
		t.Fatal(err)
	}
	if len(prog.Statements) != 1 || prog.Statements[0].Sink.Table == nil {
		t.Fatal("a reference script has one INSERT INTO")
	}
	tables := naive.Tables{}
	for name, lines := range c.inputs {
		tb, ok := prog.Catalog.Table(name)
		if !ok {
			t.Fatalf("no table %s", name)
		}
		for _, l := range lines {
			tables[tb.Name] = append(tables[tb.Name], decodeRow(t, l, tb.Columns))
		}
	}
	sink := prog.Statements[0].Sink
	rows, err := naive.Eval(sink, tables)
	if err != nil {
		t.Fatal(err)
	}
	var cols []plan.TableColumn
	for _, i := range sink.Table.Writable() {
		cols = append(cols, sink.Table.Columns[i])
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = renderRow(r.V, cols)
	}
	slices.Sort(out)
	return out, cols
}

// finalRows folds the sink's JSON lines (a changelog if they have "op")
// into the final table, each row rendered as renderRow does.
func finalRows(t *testing.T, lines []string, cols []plan.TableColumn) []string {
	t.Helper()
	count := map[string]int{}
	for _, l := range lines {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		r := renderRow(decodeRow(t, l, cols).V, cols)
		op := "+I"
		if raw, ok := obj["op"]; ok {
			json.Unmarshal(raw, &op)
		}
		switch op {
		case "+I", "+U":
			count[r]++
		case "-U", "-D":
			if count[r] == 0 {
				t.Fatalf("%s retracts a row not in the table: %s", op, r)
			}
			count[r]--
		}
	}
	var out []string
	for r, n := range count {
		for range n {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

func diffTables(t *testing.T, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	var b strings.Builder
	for _, r := range want {
		if !slices.Contains(got, r) {
			fmt.Fprintf(&b, "\n  missing %s", r)
		}
	}
	for _, r := range got {
		if !slices.Contains(want, r) {
			fmt.Fprintf(&b, "\n  extra   %s", r)
		}
	}
	t.Errorf("%s: %d rows, want %d:%s", what, len(got), len(want), b.String())
}

// decodeRow reads a JSON object into the values of cols, by their
// names (a ROW column's fields by its path); absent members are NULL.
func decodeRow(t *testing.T, line string, cols []plan.TableColumn) row.Row {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	vals := make([]row.Value, len(cols))
	for i, c := range cols {
		var v any = obj
		path := c.Path
		if len(path) == 0 {
			path = []string{c.Name}
		}
		for _, p := range path {
			m, _ := v.(map[string]any)
			v = m[p]
		}
		var err error
		if vals[i], err = jsonToValue(v, c.T); err != nil {
			t.Fatalf("%q: column %s: %v", line, c.Name, err)
		}
	}
	return row.New(vals...)
}

func jsonToValue(v any, t types.Type) (row.Value, error) {
	if v == nil {
		return row.Null(), nil
	}
	text := fmt.Sprint(v)
	switch t.Kind {
	case types.Varchar:
		return row.String(text), nil
	case types.Boolean:
		b, err := strconv.ParseBool(text)
		return row.Bool(b), err
	case types.Int, types.BigInt, types.Timestamp, types.Interval:
		i, err := strconv.ParseInt(text, 10, 64)
		return row.Value{K: t.Kind, I: i}, err
	case types.Double:
		f, err := strconv.ParseFloat(text, 64)
		return row.Double(f), err
	case types.Decimal:
		r, ok := new(big.Rat).SetString(text)
		if !ok {
			return row.Value{}, fmt.Errorf("not a decimal: %q", text)
		}
		r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Scale)), nil)))
		if !r.IsInt() {
			return row.Value{}, fmt.Errorf("%q has more than %d decimals", text, t.Scale)
		}
		return row.Decimal(r.Num().Int64()), nil
	}
	return row.Value{}, fmt.Errorf("type %s is not supported", t)
}

// renderRow renders values of cols for comparison: DOUBLEs to 12
// significant digits, DECIMALs at their scale, timestamps in UTC.
func renderRow(vals []row.Value, cols []plan.TableColumn) string {
	var b bytes.Buffer
	for i, v := range vals {
		if i > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprintf(&b, "%s=", cols[i].Name)
		switch {
		case v.IsNull():
			b.WriteString("NULL")
		case cols[i].T.Kind == types.Double:
			f := v.Float()
			if math.Abs(f) < 1e-9 {
				f = 0
			}
			b.WriteString(strconv.FormatFloat(f, 'g', 12, 64))
		case cols[i].T.Kind == types.Decimal:
			b.WriteString(new(big.Rat).SetFrac(big.NewInt(v.I), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(cols[i].T.Scale)), nil)).FloatString(int(cols[i].T.Scale)))
		case cols[i].T.Kind == types.Timestamp:
			b.WriteString(time.UnixMilli(v.I).UTC().Format("2006-01-02 15:04:05.000"))
		case cols[i].T.Kind == types.Varchar:
			b.WriteString(strconv.Quote(v.S))
		case cols[i].T.Kind == types.Boolean:
			b.WriteString(strconv.FormatBool(v.Bool()))
		default:
			b.WriteString(strconv.FormatInt(v.I, 10))
		}
	}
	return b.String()
}
