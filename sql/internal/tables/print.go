package tables

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/internal/sql/row"
)

var printSpec = &spec{
	Connector: Connector{
		Name: "print",
		Doc: "Prints each row as Flink's print connector does, `+I[1, abc, 2024-01-01 00:00:00.000]`, one line per row; " +
			"for debugging: a restarted job prints rows again.",
		Sink: true,
		Options: []Option{
			{Name: "print-identifier", Doc: "a prefix of every line: `id> +I[...]` (`id:3> ` for subtask 3 of several)"},
			{Name: "standard-error", Default: "false", Doc: "print to standard error instead of standard output"},
		},
	},
	sink: func(t Table, o options, _ bool) (connector.Sink[row.Row], error) {
		toErr, err := o.bool("standard-error")
		if err != nil {
			return nil, err
		}
		if err := t.noMetadata("print", t.stored()); err != nil {
			return nil, err
		}
		s := &printSink{t: t, cols: t.stored(), id: o.get("print-identifier"), stderr: toErr}
		return s, nil
	},
}

// printMu serializes the print sinks' writes to the process's standard
// output and error, so lines never interleave.
var printMu sync.Mutex

// printSink prints rows. Each Write prints its batch with one write.
type printSink struct {
	t      Table
	cols   []int
	id     string
	stderr bool
	// w, if not nil, replaces standard output (tests).
	w io.Writer
}

func (s *printSink) Open(_ context.Context, info connector.SubtaskInfo) (connector.Writer[row.Row], error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	// Flink's prefix: the identifier, then the 1-based subtask when
	// there are several, then "> ".
	prefix := s.id
	if info.Parallelism > 1 {
		if prefix != "" {
			prefix += ":"
		}
		prefix += strconv.Itoa(info.Subtask + 1)
	}
	if prefix != "" {
		prefix += "> "
	}
	return &printWriter{s: s, prefix: prefix}, nil
}

type printWriter struct {
	s      *printSink
	prefix string
	buf    []byte
}

func (w *printWriter) Write(_ context.Context, batch []row.Row) error {
	b := w.buf[:0]
	for _, r := range batch {
		b = append(b, w.prefix...)
		b = w.s.appendRow(b, r)
		b = append(b, '\n')
	}
	w.buf = b
	if len(b) == 0 {
		return nil
	}
	printMu.Lock()
	defer printMu.Unlock()
	out := w.s.w
	switch {
	case out != nil:
	case w.s.stderr:
		out = os.Stderr
	default:
		out = os.Stdout
	}
	if _, err := out.Write(b); err != nil {
		return fmt.Errorf("print: %w", err)
	}
	return nil
}

// appendRow appends "+I[v1, v2, ...]"; the fields of a ROW column as a
// nested "(f1, f2)", as Flink casts a ROW to text.
func (s *printSink) appendRow(b []byte, r row.Row) []byte {
	b = append(b, r.Op.String()...)
	b = append(b, '[')
	depth := 0
	var prev []string
	for k, i := range s.cols {
		c := s.t.Columns[i]
		parents := c.Path[:len(c.Path)-1]
		same := 0
		for same < depth && same < len(parents) && prev[same] == parents[same] {
			same++
		}
		for ; depth > same; depth-- {
			b = append(b, ')')
		}
		if k > 0 {
			b = append(b, ", "...)
		}
		for ; depth < len(parents); depth++ {
			b = append(b, '(')
		}
		b = appendText(b, r.V[k], c.Type)
		prev = parents
	}
	for ; depth > 0; depth-- {
		b = append(b, ')')
	}
	return append(b, ']')
}

func (w *printWriter) Flush(context.Context) error { return nil }
func (w *printWriter) Close() error                { return nil }

var blackholeSpec = &spec{
	Connector: Connector{
		Name: "blackhole",
		Doc:  "Discards every row; for benchmarks. It is idempotent, so exactly-once jobs accept it.",
		Sink: true,
	},
	sink: func(Table, options, bool) (connector.Sink[row.Row], error) { return blackhole{}, nil },
}

type blackhole struct{}

func (blackhole) Open(_ context.Context, info connector.SubtaskInfo) (connector.Writer[row.Row], error) {
	return blackhole{}, info.Validate()
}
func (blackhole) Write(context.Context, []row.Row) error { return nil }
func (blackhole) Flush(context.Context) error            { return nil }
func (blackhole) Close() error                           { return nil }

// Idempotent reports that discarding again changes nothing
// (connector.Idempotent).
func (blackhole) Idempotent() bool { return true }
