// Package sql runs streaming SQL on weir: a script of Flink-dialect DDL
// (CREATE TABLE with connectors and watermarks, CREATE VIEW, CREATE
// FUNCTION) and statements (INSERT INTO ... SELECT, bare queries) is
// parsed, bound to a logical plan, optimized, and added to a
// weir.Pipeline as the same operators the Go API builds, so every
// guarantee, failover mode and state backend applies to SQL jobs
// unchanged.
//
//	s, err := sql.Parse(text, sql.Options{Vars: map[string]string{"TPS": "10000"}})
//	...
//	p := weir.NewPipeline(weir.WithGuarantee(weir.ExactlyOnce))
//	if err := s.Build(p); err != nil { ... }
//	err = p.Run(ctx)
//
// docs/sql.md describes the dialect, the connectors, the changelog model
// and the functions.
package sql

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/weir-stream/weir/internal/sql/parse"
	"github.com/weir-stream/weir/internal/sql/plan"
	"github.com/weir-stream/weir/internal/sql/types"
	"github.com/weir-stream/weir/sql/internal/exec"
)

// ErrUnsupported is wrapped by the errors of SQL that weir parses but
// does not run; the message names the construct.
var ErrUnsupported = plan.ErrUnsupported

// Options change how a script is read and built.
type Options struct {
	// Vars fill in ${NAME} in the script's text before it is parsed,
	// as Nexmark's scripts use ${NEXMARK_TABLE} or ${TPS}.
	Vars map[string]string
	// Stdout receives the rows of bare queries and of 'print' tables;
	// nil means os.Stdout.
	Stdout io.Writer
	// QueryOutput, if set, is a directory that receives the rows of bare
	// queries as JSON lines (exactly-once part files) instead of Stdout.
	QueryOutput string
}

// Script is a parsed, bound and optimized SQL script.
type Script struct {
	prog *plan.Program
	opts Options
	ttl  time.Duration
}

// Parse reads a script: it fills in Options.Vars, parses the text,
// binds it against the functions registered from Go, and plans each
// INSERT and query. Errors name the line and column, the identifier
// and, for what weir does not run, the construct (ErrUnsupported).
func Parse(text string, o Options) (*Script, error) {
	stmts, err := parse.Parse(parse.Substitute(text, o.Vars))
	if err != nil {
		return nil, err
	}
	prog, err := plan.Bind(stmts, newCatalog())
	if err != nil {
		return nil, err
	}
	s := &Script{prog: prog, opts: o}
	if v, ok := prog.Settings["table.exec.state.ttl"]; ok {
		if s.ttl, err = parseDuration(v); err != nil {
			return nil, fmt.Errorf("SET 'table.exec.state.ttl': %w", err)
		}
	}
	if len(prog.Statements) == 0 && !prog.Explain {
		return nil, errors.New("the script has no INSERT INTO or query: nothing to run")
	}
	return s, nil
}

// newCatalog returns a catalog with the aggregates of the executor and
// the functions registered from Go.
func newCatalog() *plan.Catalog {
	cat := plan.NewCatalog()
	cat.Aggregates = aggregates
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for name, f := range registry.funcs {
		cat.AddFunction(name, f)
	}
	for class, f := range registry.classes {
		cat.Classes[class] = f
	}
	return cat
}

// aggregates types aggregate calls for the planner from the executor's
// aggregate functions.
func aggregates(fn string, distinct bool, in types.Type) (types.Type, bool, error) {
	if !exec.IsAggregate(fn) {
		return types.Type{}, false, nil
	}
	if fn == "COUNT" && in.Kind == types.Null {
		in = types.BigIntType
	}
	t, err := exec.AggResultType(fn, distinct, in)
	return t, true, err
}

// Settings returns the script's SET options.
func (s *Script) Settings() map[string]string { return s.prog.Settings }

// ExplainOnly reports whether the script holds EXPLAIN statements: it
// is to be explained, not run.
func (s *Script) ExplainOnly() bool { return s.prog.Explain }

// Explain returns, for each INSERT and query, its logical plan as bound
// and the optimized plan that runs, with each node's changelog mode, and
// the warnings of operators whose state grows without bound.
func (s *Script) Explain() string {
	var b strings.Builder
	for i, st := range s.prog.Statements {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "== Statement %d ==\n%s\n\n== Logical plan ==\n%s\n== Optimized plan ==\n%s", i+1, oneLine(st.Text), st.Logical, plan.Explain(st.Sink))
	}
	if w := s.Warnings(); len(w) > 0 {
		b.WriteString("\n== Warnings ==\n")
		for _, line := range w {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Warnings name the operators whose state grows with the number of keys
// or rows without bound, and what bounds it.
func (s *Script) Warnings() []string {
	if s.ttl > 0 {
		return nil
	}
	var out []string
	for i, st := range s.prog.Statements {
		for _, w := range plan.Unbounded(st.Sink) {
			out = append(out, fmt.Sprintf("statement %d: %s", i+1, w))
		}
	}
	return out
}

func (o Options) stdout() io.Writer {
	if o.Stdout != nil {
		return o.Stdout
	}
	return os.Stdout
}

// parseDuration reads a duration as Flink's options write them: "1 h",
// "30 min", "10 s", "500 ms", "3600000" (milliseconds), or Go's "1h30m".
func parseDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if d, err := time.ParseDuration(v); err == nil {
		return d, nil
	}
	num, unit := v, ""
	if i := strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		num, unit = strings.TrimSpace(v[:i]), strings.ToLower(strings.TrimSpace(v[i:]))
	}
	var n int64
	if _, err := fmt.Sscan(num, &n); err != nil || num == "" {
		return 0, fmt.Errorf("%q is not a duration", v)
	}
	units := map[string]time.Duration{"": time.Millisecond, "ms": time.Millisecond, "milli": time.Millisecond, "millis": time.Millisecond,
		"s": time.Second, "sec": time.Second, "second": time.Second, "seconds": time.Second,
		"min": time.Minute, "minute": time.Minute, "minutes": time.Minute,
		"h": time.Hour, "hour": time.Hour, "hours": time.Hour, "d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour}
	u, ok := units[unit]
	if !ok {
		return 0, fmt.Errorf("%q: unknown unit %q", v, unit)
	}
	return time.Duration(n) * u, nil
}
