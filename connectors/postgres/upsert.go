package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/weir-stream/weir/connector"
)

// upsertWriter inserts or updates rows by key. Each copy of the buffer
// runs in one transaction: COPY into a temporary staging table, then one
// INSERT ... SELECT DISTINCT ON (key) ... ON CONFLICT (key) DO UPDATE, in
// which the last record of a key wins. Rows are inserted in key order, so
// concurrent subtasks lock rows in the same order and cannot deadlock.
type upsertWriter[T any] struct {
	s      *Sink[T]
	conn   *pgx.Conn
	stage  pgx.Identifier
	upsert string // the INSERT ... ON CONFLICT statement
	buf    []T
	err    error
}

func (s *Sink[T]) openUpsert(ctx context.Context, conn *pgx.Conn, t *tableInfo) (connector.Writer[T], error) {
	keys := s.opts.Key
	if len(keys) == 0 {
		for _, c := range t.columns {
			if c.key {
				keys = append(keys, c.name)
			}
		}
		if len(keys) == 0 {
			return nil, fmt.Errorf("postgres: upsert into table %s needs a key: the table has no primary key and Options.Key is empty", s.opts.Table)
		}
	}
	for _, k := range keys {
		if !slices.Contains(s.mapping.columns, k) {
			return nil, fmt.Errorf("postgres: upsert key column %q of table %s is not among the mapped columns (%s)",
				k, s.opts.Table, strings.Join(s.mapping.columns, ", "))
		}
	}
	cols := sanitizeAll(s.mapping.columns)
	keyCols := strings.Join(sanitizeAll(keys), ", ")
	var set []string
	for _, c := range s.mapping.columns {
		if !slices.Contains(keys, c) {
			q := pgx.Identifier{c}.Sanitize()
			set = append(set, q+" = EXCLUDED."+q)
		}
	}
	action := "DO NOTHING"
	if len(set) > 0 {
		action = "DO UPDATE SET " + strings.Join(set, ", ")
	}
	stage := pgx.Identifier{"pg_temp", "weir_stage"}
	w := &upsertWriter[T]{s: s, conn: conn, stage: stage,
		buf: make([]T, 0, min(s.opts.BatchRows, 4096))}
	w.upsert = fmt.Sprintf("INSERT INTO %s (%s) SELECT DISTINCT ON (%s) %s FROM %s ORDER BY %s, weir_ord DESC ON CONFLICT (%s) %s",
		s.identity, strings.Join(cols, ", "), keyCols, strings.Join(cols, ", "), stage.Sanitize(), keyCols, keyCols, action)
	create := fmt.Sprintf("CREATE TEMP TABLE weir_stage ON COMMIT DELETE ROWS AS SELECT %s FROM %s WITH NO DATA",
		strings.Join(cols, ", "), s.identity)
	if _, err := conn.Exec(ctx, create); err != nil {
		return nil, s.errorf(err, "creating the staging table")
	}
	if _, err := conn.Exec(ctx, "ALTER TABLE pg_temp.weir_stage ADD COLUMN weir_ord bigint"); err != nil {
		return nil, s.errorf(err, "creating the staging table")
	}
	return w, nil
}

func sanitizeAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = pgx.Identifier{n}.Sanitize()
	}
	return out
}

func (w *upsertWriter[T]) Write(ctx context.Context, batch []T) error {
	if w.err != nil {
		return w.err
	}
	w.buf = append(w.buf, batch...)
	if len(w.buf) >= w.s.opts.BatchRows {
		return w.Flush(ctx)
	}
	return nil
}

// Flush upserts the buffered records in one transaction; they are then
// visible.
func (w *upsertWriter[T]) Flush(ctx context.Context) error {
	if w.err != nil || len(w.buf) == 0 {
		return w.err
	}
	err := pgx.BeginFunc(ctx, w.conn, func(tx pgx.Tx) error {
		if _, err := w.s.mapping.copyRows(ctx, w.conn, w.stage, w.buf, true); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, w.upsert)
		return err
	})
	if err != nil {
		w.err = w.s.errorf(err, "upserting %d rows", len(w.buf))
		return w.err
	}
	clear(w.buf)
	w.buf = w.buf[:0]
	return nil
}

func (w *upsertWriter[T]) Close() error {
	if w.conn == nil {
		return nil
	}
	err := w.conn.Close(context.Background())
	w.conn = nil
	return err
}
