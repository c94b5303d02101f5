// Package postgres is weir's PostgreSQL sink, built on pgx v5.
//
// The sink writes a stream's records as rows of one table, with COPY
// (pgx CopyFrom) for throughput. It has two modes:
//
//   - Append (the default) inserts every record. With checkpoints it
//     commits with them by two-phase commit (connector.Committer): the
//     rows of a checkpoint interval are copied into one database
//     transaction, which at the checkpoint barrier records a marker row
//     (job, subtask, checkpoint) and is prepared with PREPARE TRANSACTION:
//     durable on the server, invisible to readers. When the checkpoint
//     completes the writer runs COMMIT PREPARED. The server must allow
//     prepared transactions (max_prepared_transactions > 0).
//   - Upsert inserts or updates rows by key (INSERT ... ON CONFLICT DO
//     UPDATE), so writing a record again changes nothing: the sink is
//     connector.Idempotent and exactly-once without transactions when
//     the job's records are deterministic.
//
// Why prepared transactions: the Committer contract asks PreCommit to make
// the records durable but invisible, and Commit to work after the process
// restarted, from the description stored in the checkpoint alone. A
// prepared transaction is exactly that: it survives the writer's process
// (and a server restart), it is named by its global id (the description),
// and any session can commit it later. Buffering rows until Commit instead
// would lose a completed checkpoint's rows if the process died before
// committing them. The marker row, written inside the prepared
// transaction, makes a repeated Commit safe to tell apart: the transaction
// is gone and its marker is there (committed before, a no-op) or both are
// gone (lost, an error).
//
// See docs/connectors/postgres.md for the options, guarantees and failure
// behaviour.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weir-stream/weir/connector"
)

// Mode says how the sink writes rows.
type Mode int

const (
	// Append inserts every record; with checkpoints it commits with them
	// (two-phase commit with prepared transactions).
	Append Mode = iota
	// Upsert inserts or updates by key: idempotent.
	Upsert
)

func (m Mode) String() string {
	if m == Upsert {
		return "upsert"
	}
	return "append"
}

// ParseMode parses "append" or "upsert".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "append", "":
		return Append, nil
	case "upsert":
		return Upsert, nil
	}
	return Append, fmt.Errorf(`postgres: mode must be "append" or "upsert", not %q`, s)
}

// Options configure a sink. URL and Table are required.
type Options[T any] struct {
	// URL is the connection string, a postgres:// URL or key=value pairs
	// as libpq takes them.
	URL string
	// Table is the target table, "name" or "schema.name". It must exist.
	Table string
	// Mode is Append (the default) or Upsert.
	Mode Mode
	// Key lists the conflict columns of Upsert; the default is the
	// table's primary key. It must match a unique index.
	Key []string
	// Columns and Row map a record to a row by a function: Row returns the
	// values of Columns, in order. Without Row, T must be a struct whose
	// exported fields map to columns: the `db:"name"` tag names the column
	// (`db:"-"` skips the field), untagged fields map to the snake_case
	// of their name.
	Columns []string
	Row     func(T) []any
	// JobID names the job in prepared-transaction ids and marker rows. Two
	// jobs that write through sinks with the same Table and operator name
	// must set different JobIDs, as each aborts the other's unfinished
	// transactions otherwise. The default is "<table>/<operator>".
	JobID string
	// MarkerTable is the table of commit markers, created if missing; the
	// default is "weir_sink_commits".
	MarkerTable string
	// BatchRows is how many records are buffered before a COPY; the
	// default is 10000.
	BatchRows int
	// ConnectTimeout bounds how long Open retries an unreachable server
	// (with exponential backoff from 100ms to 5s) before it fails; the
	// default is 30s.
	ConnectTimeout time.Duration
	// OnRetry, if set, is called before each retry of a failed connection
	// attempt, with the attempt number, its error and the wait.
	OnRetry func(attempt int, err error, wait time.Duration)
}

// Sink is a PostgreSQL sink for records of type T. Create it with New.
type Sink[T any] struct {
	opts     Options[T]
	table    pgx.Identifier
	cfg      *pgx.ConnConfig
	mapping  mapping[T]
	where    string // "table t in database d at host:port", for errors
	markers  pgx.Identifier
	identity string // the sanitized table name
}

// New checks the options that need no server (the URL parses, a table is
// named, T maps to columns) and returns the sink. Open checks the rest
// against the database.
func New[T any](opts Options[T]) (*Sink[T], error) {
	if opts.URL == "" {
		return nil, errors.New("postgres: a connection URL is required")
	}
	cfg, err := pgx.ParseConfig(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("postgres: the connection URL does not parse: %w", err)
	}
	if opts.Table == "" {
		return nil, errors.New("postgres: a table is required")
	}
	table := pgx.Identifier(strings.Split(opts.Table, "."))
	if len(table) > 2 {
		return nil, fmt.Errorf("postgres: table %q must be name or schema.name", opts.Table)
	}
	if opts.Mode != Append && opts.Mode != Upsert {
		return nil, fmt.Errorf("postgres: unknown mode %d", opts.Mode)
	}
	m, err := newMapping(opts.Columns, opts.Row)
	if err != nil {
		return nil, err
	}
	if opts.MarkerTable == "" {
		opts.MarkerTable = "weir_sink_commits"
	}
	if opts.BatchRows <= 0 {
		opts.BatchRows = 10000
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 30 * time.Second
	}
	s := &Sink[T]{opts: opts, table: table, cfg: cfg, mapping: m,
		markers: pgx.Identifier(strings.Split(opts.MarkerTable, ".")), identity: table.Sanitize()}
	s.where = fmt.Sprintf("table %s in database %s at %s:%d", opts.Table, cfg.Database, cfg.Host, cfg.Port)
	return s, nil
}

// Idempotent reports whether the sink upserts: a repeated write does not
// change the table.
func (s *Sink[T]) Idempotent() bool { return s.opts.Mode == Upsert }

// Open connects (retrying an unreachable server with backoff), checks
// that the table exists and that every mapped column exists with a type
// the field can be written to, and returns the subtask's writer. In
// Append mode the writer is a connector.Committer.
func (s *Sink[T]) Open(ctx context.Context, info connector.SubtaskInfo) (connector.Writer[T], error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	conn, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	tbl, err := s.describe(ctx, conn)
	if err == nil {
		err = s.mapping.check(conn, tbl, s.opts.Table)
	}
	var w connector.Writer[T]
	if err == nil {
		if s.opts.Mode == Upsert {
			w, err = s.openUpsert(ctx, conn, tbl)
		} else {
			w, err = s.openAppend(ctx, conn, info)
		}
	}
	if err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	return w, nil
}

// errorf wraps err with the sink's table and database.
func (s *Sink[T]) errorf(err error, format string, args ...any) error {
	return fmt.Errorf("postgres: %s (%s): %w", fmt.Sprintf(format, args...), s.where, err)
}
