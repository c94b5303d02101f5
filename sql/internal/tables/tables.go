// Package tables turns the tables of SQL DDL (CREATE TABLE t (...) WITH
// ('connector' = '...', ...)) into weir sources and sinks of row.Row, on
// top of weir's connectors (nexmark, connectors/file, connectors/kafka,
// ...). The planner hands it a Table — the table's leaf columns, its WITH
// options and primary key — and the columns a query reads; it hands back
// a connector.Source or connector.Sink whose rows hold exactly those
// columns.
//
// Every connector is described by a spec (Connectors) that lists its
// options; NewSource and NewSink check a table's options against it
// before they build anything, so a misspelt or missing option fails at
// planning with an error naming the option and the table.
//
// Errors wrap one of ErrUnknownConnector, ErrOption, ErrColumn,
// ErrFormat and ErrUnsupported, and name the table.
//
// The files: spec.go (the registry and option checking), adapt.go
// (connectors of other record types as connectors of rows, keeping their
// optional abilities), json.go, avro.go and values.go (the formats), and
// one file per connector. The user documentation is docs/sql/connectors.md.
package tables

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// Column is a leaf column of a table: a ROW column is flattened into one
// Column per (nested) field, Path naming it: ["person","id"]. The columns
// of one ROW are adjacent, in field order.
type Column struct {
	// Path is the column's name, then the names of the nested fields.
	Path []string
	// Type is the leaf type (never types.Row).
	Type types.Type
	// Metadata is the metadata key the column reads (for example Kafka's
	// "timestamp"), or "" for a physical column.
	Metadata string
	// Virtual marks a column that is not stored in the table: a computed
	// column (filled by the planner, never asked of a source) or a METADATA
	// VIRTUAL column (read but not written).
	Virtual bool
}

// Name returns the column's path joined by dots: "person.id".
func (c Column) Name() string { return strings.Join(c.Path, ".") }

// Table is a table of the DDL.
type Table struct {
	Name    string
	Columns []Column
	// Options are the WITH options, keys as written, 'connector' among
	// them.
	Options map[string]string
	// PrimaryKey holds indexes into Columns.
	PrimaryKey []int
}

// Source is a table's source.
type Source struct {
	Source connector.Source[row.Row]
	// Bounded says the source ends (its readers return io.EOF).
	Bounded bool
}

// Errors a user can act on; every error of NewSource and NewSink wraps
// one of them.
var (
	// ErrUnknownConnector: the 'connector' option is missing or names no
	// connector; the message lists the known ones.
	ErrUnknownConnector = errors.New("unknown connector")
	// ErrOption: an option is unknown, missing or has a bad value; the
	// message names the option.
	ErrOption = errors.New("invalid table option")
	// ErrColumn: the connector cannot fill or write a column; the message
	// names the column.
	ErrColumn = errors.New("unsupported column")
	// ErrFormat: the connector lacks the format the table asks for.
	ErrFormat = errors.New("unsupported format")
	// ErrUnsupported: the table is used in a way its connector cannot
	// serve (a sink-only connector read, say).
	ErrUnsupported = errors.New("unsupported use of table")
)

// NewSource reads the table; its rows hold only the columns cols (indexes
// into t.Columns), in that order, all with op +I but for an upsert-kafka
// table, whose rows are +U (a key's new row) or -D (a deleted key: only
// the primary key columns are set, which cols must include). Only those values are
// built (projection push-down), with one []row.Value allocation per row.
// A virtual computed column cannot be among cols: the planner computes it.
func NewSource(t Table, cols []int) (Source, error) {
	c, opts, err := lookup(t)
	if err != nil {
		return Source{}, err
	}
	if c.source == nil {
		return Source{}, t.errf(ErrUnsupported, "connector %q is sink-only; a query cannot read the table", c.Name)
	}
	for _, i := range cols {
		if i < 0 || i >= len(t.Columns) {
			return Source{}, fmt.Errorf("table %s: column index %d out of range", t.Name, i)
		}
	}
	return c.source(t, opts, cols)
}

// Where narrows what a source reads to the rows whose column Col (an
// index into the source's columns) holds one of the values In; a Col
// out of range narrows nothing.
type Where struct {
	Col int
	In  []row.Value
	// Room, if more than the number of columns read, is the length of
	// row the reader will write over each row's values: a connector that
	// can makes the values with that capacity (the nexmark connector),
	// so that the projection needs no second allocation.
	Room int
}

// NewSourceWhere is NewSource narrowed by w where the connector can skip
// records before it builds their rows (the nexmark connector, on
// event_type). Others ignore w, so the reader of the rows still filters
// them.
func NewSourceWhere(t Table, cols []int, w Where) (Source, error) {
	c, opts, err := lookup(t)
	if err != nil {
		return Source{}, err
	}
	if c.where == nil {
		return NewSource(t, cols)
	}
	for _, i := range cols {
		if i < 0 || i >= len(t.Columns) {
			return Source{}, fmt.Errorf("table %s: column index %d out of range", t.Name, i)
		}
	}
	return c.where(t, opts, cols, w)
}

// Narrows reports whether NewSourceWhere, given a Where on table column
// col, returns only rows whose col holds one of the Where's values, so a
// reader need not test them again (the nexmark connector on event_type).
// It is false for a table it cannot look up.
func Narrows(t Table, col int) bool {
	c, _, err := lookup(t)
	return err == nil && c.where != nil && c.narrows != nil && col >= 0 && col < len(t.Columns) && c.narrows(t, col)
}

// NewSink writes rows of the table's stored columns (every column not
// Virtual: the physical columns and the writable metadata columns), in
// the table's column order. updating says rows carry changelog ops (-U,
// +U, -D) rather than only +I; a connector that can only append rejects
// it.
func NewSink(t Table, updating bool) (connector.Sink[row.Row], error) {
	c, opts, err := lookup(t)
	if err != nil {
		return nil, err
	}
	if c.sink == nil {
		return nil, t.errf(ErrUnsupported, "connector %q is source-only; a query cannot write the table", c.Name)
	}
	return c.sink(t, opts, updating)
}

// NewSinkTo is NewSink with the standard output of a 'print' table
// replaced by stdout (unless the table prints to standard error), for a
// caller that captures what a job prints.
func NewSinkTo(t Table, updating bool, stdout io.Writer) (connector.Sink[row.Row], error) {
	s, err := NewSink(t, updating)
	if ps, ok := s.(*printSink); ok && err == nil && !ps.stderr {
		ps.w = stdout
	}
	return s, err
}

// stored returns the indexes of t's stored (not Virtual) columns.
func (t Table) stored() []int {
	var out []int
	for i, c := range t.Columns {
		if !c.Virtual {
			out = append(out, i)
		}
	}
	return out
}

func (t Table) errf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("table %s: %w: %s", t.Name, sentinel, fmt.Sprintf(format, args...))
}

// columnErr is the error for a column the connector cannot serve.
func (t Table) columnErr(c Column, format string, args ...any) error {
	return t.errf(ErrColumn, "column %s: %s", c.Name(), fmt.Sprintf(format, args...))
}

// noMetadata rejects metadata columns among cols, for connectors that
// have none.
func (t Table) noMetadata(connectorName string, cols []int) error {
	for _, i := range cols {
		if c := t.Columns[i]; c.Metadata != "" {
			return t.columnErr(c, "connector %q has no metadata %q", connectorName, c.Metadata)
		}
	}
	return nil
}

// lookup finds t's connector and checks t's options against its spec.
func lookup(t Table) (*spec, options, error) {
	name, ok := t.Options["connector"]
	if !ok {
		return nil, options{}, t.errf(ErrUnknownConnector, "no 'connector' option; known connectors: %s", knownNames())
	}
	for _, c := range registry {
		if c.Name == name {
			opts, err := c.check(t)
			return c, opts, err
		}
	}
	return nil, options{}, t.errf(ErrUnknownConnector, "%q; known connectors: %s", name, knownNames())
}

func knownNames() string {
	var names []string
	for _, c := range registry {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

// Connectors describes each connector and its options, for error
// messages and documentation.
func Connectors() []Connector {
	out := make([]Connector, len(registry))
	for i, c := range registry {
		out[i] = c.Connector
		out[i].Options = slices.Clone(c.Options)
	}
	return out
}
