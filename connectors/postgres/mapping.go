package postgres

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// mapping turns a record into the values of its columns.
type mapping[T any] struct {
	columns []string
	fields  []int    // struct field index per column; nil with row
	names   []string // Go field names, for errors
	row     func(T) []any
}

// newMapping builds the mapping from Options.Columns and Options.Row, or
// from T's struct fields.
func newMapping[T any](columns []string, row func(T) []any) (mapping[T], error) {
	if row != nil {
		if len(columns) == 0 {
			return mapping[T]{}, errors.New("postgres: Options.Row needs Options.Columns, the columns it returns values for")
		}
		return mapping[T]{columns: columns, row: row}, nil
	}
	if len(columns) > 0 {
		return mapping[T]{}, errors.New("postgres: Options.Columns needs Options.Row, the function that returns their values")
	}
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		return mapping[T]{}, fmt.Errorf("postgres: records of type %v are not a struct: give Options.Columns and Options.Row", t)
	}
	var m mapping[T]
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Tag.Get("db")
		if name == "-" {
			continue
		}
		if name == "" {
			name = snake(f.Name)
		}
		if j := slices.Index(m.columns, name); j >= 0 {
			return mapping[T]{}, fmt.Errorf("postgres: fields %s and %s of %v both map to column %q", m.names[j], f.Name, t, name)
		}
		m.columns = append(m.columns, name)
		m.fields = append(m.fields, i)
		m.names = append(m.names, f.Name)
	}
	if len(m.columns) == 0 {
		return mapping[T]{}, fmt.Errorf("postgres: %v has no exported fields to write", t)
	}
	return m, nil
}

// snake turns a Go field name into snake_case: WindowStart -> window_start,
// ID -> id, HTTPCode -> http_code.
func snake(name string) string {
	r := []rune(name)
	var b strings.Builder
	for i, c := range r {
		if unicode.IsUpper(c) && i > 0 && (unicode.IsLower(r[i-1]) || i+1 < len(r) && unicode.IsLower(r[i+1]) && unicode.IsUpper(r[i-1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

// values appends the column values of v to row[:0].
func (m *mapping[T]) values(v *T, row []any) []any {
	if m.row != nil {
		return m.row(*v)
	}
	rv := reflect.ValueOf(v).Elem()
	row = row[:0]
	for _, i := range m.fields {
		row = append(row, rv.Field(i).Interface())
	}
	return row
}

// column is one column of the target table.
type column struct {
	name     string
	oid      uint32
	typ      string
	notNull  bool
	defaults bool // has a default or is generated/identity
	key      bool // part of the primary key
}

type tableInfo struct {
	columns []column
}

func (t *tableInfo) find(name string) (column, bool) {
	for _, c := range t.columns {
		if c.name == name {
			return c, true
		}
	}
	return column{}, false
}

func (t *tableInfo) names() string {
	var n []string
	for _, c := range t.columns {
		n = append(n, c.name)
	}
	return strings.Join(n, ", ")
}

// describe reads the table's columns; it fails if the table is missing.
func (s *Sink[T]) describe(ctx context.Context, conn *pgx.Conn) (*tableInfo, error) {
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", s.identity).Scan(&exists); err != nil {
		return nil, s.errorf(err, "looking up the table")
	}
	if !exists {
		return nil, fmt.Errorf("postgres: table %s does not exist (%s)", s.opts.Table, s.where)
	}
	rows, err := conn.Query(ctx, `
		SELECT a.attname, a.atttypid, format_type(a.atttypid, a.atttypmod), a.attnotnull,
		       a.atthasdef OR a.attidentity <> '' OR a.attgenerated <> '',
		       COALESCE(a.attnum = ANY (i.indkey), false)
		FROM pg_attribute a
		LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
		WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped
		ORDER BY a.attnum`, s.identity)
	if err != nil {
		return nil, s.errorf(err, "reading the table's columns")
	}
	t := &tableInfo{}
	for rows.Next() {
		var c column
		if err := rows.Scan(&c.name, &c.oid, &c.typ, &c.notNull, &c.defaults, &c.key); err != nil {
			rows.Close()
			return nil, s.errorf(err, "reading the table's columns")
		}
		t.columns = append(t.columns, c)
	}
	if err := rows.Err(); err != nil {
		return nil, s.errorf(err, "reading the table's columns")
	}
	return t, nil
}

// check compares the mapping with the table: every mapped column must
// exist, struct fields must be writable to their column's type, and every
// NOT NULL column without a default must be mapped.
func (m *mapping[T]) check(conn *pgx.Conn, t *tableInfo, table string) error {
	var zero T
	rv := reflect.ValueOf(&zero).Elem()
	for i, name := range m.columns {
		c, ok := t.find(name)
		if !ok {
			what := fmt.Sprintf("column %q", name)
			if m.fields != nil {
				what += " (field " + m.names[i] + ")"
			}
			return fmt.Errorf("postgres: table %s has no %s; its columns are %s", table, what, t.names())
		}
		if m.fields == nil {
			continue
		}
		if _, known := conn.TypeMap().TypeForOID(c.oid); !known {
			continue // a type pgx learns at COPY time (enum, domain, ...)
		}
		v := rv.Field(m.fields[i]).Interface()
		if conn.TypeMap().PlanEncode(c.oid, pgtype.BinaryFormatCode, v) == nil {
			return fmt.Errorf("postgres: column %q of table %s is %s, which field %s (%T) cannot be written to",
				name, table, c.typ, m.names[i], v)
		}
	}
	for _, c := range t.columns {
		if c.notNull && !c.defaults && !slices.Contains(m.columns, c.name) {
			return fmt.Errorf("postgres: column %q of table %s is NOT NULL without a default, but no field or column maps to it (mapped: %s)",
				c.name, table, strings.Join(m.columns, ", "))
		}
	}
	return nil
}

// copySource feeds records to CopyFrom, reusing one row slice.
type copySource[T any] struct {
	m    *mapping[T]
	recs []T
	i    int
	row  []any
	ord  bool // append the record's index as a last column (upsert staging)
}

func (c *copySource[T]) Next() bool { c.i++; return c.i < len(c.recs) }

func (c *copySource[T]) Values() ([]any, error) {
	c.row = c.m.values(&c.recs[c.i], c.row)
	if c.ord {
		c.row = append(c.row, int64(c.i))
	}
	if len(c.row) != len(c.m.columns)+btoi(c.ord) {
		return nil, fmt.Errorf("postgres: Options.Row returned %d values for %d columns", len(c.row), len(c.m.columns))
	}
	return c.row, nil
}

func (c *copySource[T]) Err() error { return nil }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// copyRows copies recs into table with COPY.
func (m *mapping[T]) copyRows(ctx context.Context, conn *pgx.Conn, table pgx.Identifier, recs []T, ord bool) (int64, error) {
	cols := m.columns
	if ord {
		cols = append(slices.Clip(cols), "weir_ord")
	}
	return conn.CopyFrom(ctx, table, cols, &copySource[T]{m: m, recs: recs, i: -1, ord: ord})
}
