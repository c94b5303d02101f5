package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weir-stream/weir/connector"
)

// markerRetention is how many checkpoints back a subtask's commit markers
// are kept: enough for any restore to find the markers of the
// transactions it commits again.
const markerRetention = 1000

// appendWriter inserts every record. Without checkpoints each Flush copies
// the buffered records in one COPY (visible at once). After Recover it is
// transactional: records are copied into one open transaction per
// checkpoint interval, which PreCommit prepares and Commit commits.
type appendWriter[T any] struct {
	s       *Sink[T]
	conn    *pgx.Conn // data: COPY and PREPARE TRANSACTION
	ctl     *pgx.Conn // control: COMMIT/ROLLBACK PREPARED, markers (transactional mode)
	jobID   string
	subtask int
	par     int // the run's parallelism
	buf     []T
	txn     bool // transactional mode, after Recover
	inTx    bool // a transaction is open on conn
	err     error
}

func (s *Sink[T]) openAppend(_ context.Context, conn *pgx.Conn, info connector.SubtaskInfo) (connector.Writer[T], error) {
	job := s.opts.JobID
	if job == "" {
		job = s.opts.Table + "/" + info.Operator
	}
	return &appendWriter[T]{s: s, conn: conn, jobID: job, subtask: info.Subtask, par: info.Parallelism,
		buf: make([]T, 0, min(s.opts.BatchRows, 4096))}, nil
}

func (w *appendWriter[T]) Write(ctx context.Context, batch []T) error {
	if w.err != nil {
		return w.err
	}
	w.buf = append(w.buf, batch...)
	if len(w.buf) >= w.s.opts.BatchRows {
		return w.copyBuffered(ctx)
	}
	return nil
}

// copyBuffered copies the buffered records: into the open transaction in
// transactional mode, by themselves (one COPY commits atomically)
// otherwise.
func (w *appendWriter[T]) copyBuffered(ctx context.Context) error {
	if w.err != nil || len(w.buf) == 0 {
		return w.err
	}
	if w.txn && !w.inTx {
		if _, err := w.conn.Exec(ctx, "BEGIN"); err != nil {
			w.err = w.s.errorf(err, "subtask %d: beginning a transaction", w.subtask)
			return w.err
		}
		w.inTx = true
	}
	if _, err := w.s.mapping.copyRows(ctx, w.conn, w.s.table, w.buf, false); err != nil {
		w.err = w.s.errorf(err, "subtask %d: copying %d rows", w.subtask, len(w.buf))
		return w.err
	}
	clear(w.buf)
	w.buf = w.buf[:0]
	return nil
}

// Flush copies the buffered records. Without checkpoints they are then
// visible; in transactional mode they join the open transaction.
func (w *appendWriter[T]) Flush(ctx context.Context) error { return w.copyBuffered(ctx) }

// Close closes the connections. An open transaction is rolled back by
// the server; prepared ones stay for Commit or a later Recover.
func (w *appendWriter[T]) Close() error {
	var err error
	if w.conn != nil {
		err = w.conn.Close(context.Background())
		w.conn = nil
	}
	if w.ctl != nil {
		w.ctl.Close(context.Background())
		w.ctl = nil
	}
	return err
}

// gid is the global id of the prepared transaction of a checkpoint.
func (w *appendWriter[T]) gid(checkpoint int64) string {
	return w.prefix() + strconv.FormatInt(checkpoint, 10)
}

func (w *appendWriter[T]) prefix() string {
	return "weir/" + w.jobID + "/" + strconv.Itoa(w.subtask) + "/"
}

// parseGID returns the checkpoint of one of this subtask's gids.
func (w *appendWriter[T]) parseGID(gid string) (int64, error) {
	rest, ok := strings.CutPrefix(gid, w.prefix())
	ck, err := strconv.ParseInt(rest, 10, 64)
	if !ok || err != nil {
		return 0, fmt.Errorf("postgres: %q is not a transaction of job %q subtask %d", gid, w.jobID, w.subtask)
	}
	return ck, nil
}

// PreCommit copies what is buffered into the open transaction, adds the
// marker row of (job, subtask, checkpoint) and prepares the transaction.
// It returns the transaction's gid, or nil when nothing was written since
// the last PreCommit.
func (w *appendWriter[T]) PreCommit(ctx context.Context, checkpoint int64) ([]byte, error) {
	if err := w.copyBuffered(ctx); err != nil {
		return nil, err
	}
	if !w.inTx {
		return nil, nil
	}
	gid := w.gid(checkpoint)
	_, err := w.conn.Exec(ctx, "INSERT INTO "+w.s.markers.Sanitize()+" (job_id, subtask, checkpoint) VALUES ($1, $2, $3)",
		w.jobID, w.subtask, checkpoint)
	if err == nil {
		_, err = w.conn.Exec(ctx, "PREPARE TRANSACTION "+quote(gid))
	}
	if err != nil {
		w.err = w.s.errorf(err, "subtask %d: preparing transaction %s", w.subtask, gid)
		return nil, w.err
	}
	w.inTx = false
	return []byte(gid), nil
}

// Commit commits a prepared transaction. A transaction committed before
// (no longer prepared, its marker present) is a no-op; one that is
// neither prepared nor committed is reported lost.
func (w *appendWriter[T]) Commit(ctx context.Context, txn []byte) error {
	if len(txn) == 0 {
		return nil
	}
	if w.ctl == nil {
		return errors.New("postgres: Commit before Recover")
	}
	gid := string(txn)
	ck, err := w.parseGID(gid)
	if err != nil {
		return err
	}
	_, err = w.ctl.Exec(ctx, "COMMIT PREPARED "+quote(gid))
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42704" { // undefined_object: not prepared
		var done bool
		if qerr := w.ctl.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+w.s.markers.Sanitize()+
			" WHERE job_id = $1 AND subtask = $2 AND checkpoint = $3)", w.jobID, w.subtask, ck).Scan(&done); qerr != nil {
			return w.s.errorf(qerr, "subtask %d: looking up the marker of transaction %s", w.subtask, gid)
		}
		if done {
			return nil
		}
		return fmt.Errorf("postgres: transaction %s is lost: it is neither prepared nor committed (%s)", gid, w.s.where)
	}
	if err != nil {
		return w.s.errorf(err, "subtask %d: committing transaction %s", w.subtask, gid)
	}
	if ck%100 == 0 {
		if _, err := w.ctl.Exec(ctx, "DELETE FROM "+w.s.markers.Sanitize()+
			" WHERE job_id = $1 AND subtask = $2 AND checkpoint < $3", w.jobID, w.subtask, ck-markerRetention); err != nil {
			return w.s.errorf(err, "subtask %d: pruning commit markers", w.subtask)
		}
	}
	return nil
}

// Recover switches the writer to transactional mode. It creates the
// marker table if needed, commits the restored checkpoint's
// transactions, rolls back every other prepared transaction of this job
// and subtask (left by a failed attempt), and forgets the markers of
// checkpoints after the restored one, whose ids a new run may reuse.
// Rows that such checkpoints committed stay in the table: PostgreSQL
// cannot withdraw them. On a fresh start subtask 0 also resolves what
// subtasks beyond this run's parallelism left (see dropBeyond).
func (w *appendWriter[T]) Recover(ctx context.Context, restored int64, commit [][]byte) error {
	w.txn = true
	ctl, err := w.s.connect(ctx)
	if err != nil {
		return err
	}
	w.ctl = ctl
	var maxPrepared int
	if err := ctl.QueryRow(ctx, "SELECT current_setting('max_prepared_transactions')::int").Scan(&maxPrepared); err != nil {
		return w.s.errorf(err, "reading max_prepared_transactions")
	}
	if maxPrepared == 0 {
		return fmt.Errorf("postgres: the append sink commits with checkpoints by PREPARE TRANSACTION, which the server disables: set max_prepared_transactions above 0 (%s), or use Mode Upsert", w.s.where)
	}
	if err := w.createMarkers(ctx); err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, t := range commit {
		if err := w.Commit(ctx, t); err != nil {
			return err
		}
		keep[string(t)] = true
	}
	gids, err := w.prepared(ctx, w.prefix())
	if err != nil {
		return w.s.errorf(err, "subtask %d: listing prepared transactions", w.subtask)
	}
	for _, gid := range gids {
		if _, perr := w.parseGID(gid); perr != nil || keep[gid] {
			continue // another subtask's whose number starts like ours
		}
		if err := w.rollback(ctx, gid); err != nil {
			return w.s.errorf(err, "subtask %d: aborting transaction %s", w.subtask, gid)
		}
	}
	_, err = ctl.Exec(ctx, "DELETE FROM "+w.s.markers.Sanitize()+
		" WHERE job_id = $1 AND subtask = $2 AND (checkpoint > $3 OR checkpoint < $3 - $4)",
		w.jobID, w.subtask, restored, int64(markerRetention))
	if err != nil {
		return w.s.errorf(err, "subtask %d: clearing commit markers", w.subtask)
	}
	if restored == 0 && w.subtask == 0 {
		return w.dropBeyond(ctx)
	}
	return nil
}

// dropBeyond rolls back the prepared transactions and deletes the commit
// markers of the job's subtasks at or beyond this run's parallelism: an
// earlier run at a higher parallelism left them, and no subtask of this
// one resolves them. A prepared transaction left so would hold its locks
// forever; a marker left so would, after a later rescale up, pass a lost
// transaction of a new subtask with its number and checkpoint for one
// committed. Only a fresh start may do this: a restore hands the
// transactions of its checkpoint to the subtasks that commit them.
func (w *appendWriter[T]) dropBeyond(ctx context.Context) error {
	if w.par <= 0 {
		return nil
	}
	job := "weir/" + w.jobID + "/"
	gids, err := w.prepared(ctx, job)
	if err != nil {
		return w.s.errorf(err, "listing the prepared transactions of subtasks beyond %d", w.par)
	}
	for _, gid := range gids {
		sub, ck, ok := strings.Cut(strings.TrimPrefix(gid, job), "/")
		n, err := strconv.Atoi(sub)
		if _, cerr := strconv.ParseInt(ck, 10, 64); !ok || err != nil || cerr != nil || n < w.par {
			continue // this run's, or another job's whose id starts like ours
		}
		if err := w.rollback(ctx, gid); err != nil {
			return w.s.errorf(err, "aborting transaction %s of a subtask beyond %d", gid, w.par)
		}
	}
	if _, err := w.ctl.Exec(ctx, "DELETE FROM "+w.s.markers.Sanitize()+" WHERE job_id = $1 AND subtask >= $2", w.jobID, w.par); err != nil {
		return w.s.errorf(err, "deleting the commit markers of subtasks beyond %d", w.par)
	}
	return nil
}

// prepared returns the ids of the transactions prepared in the database
// whose id starts with prefix.
func (w *appendWriter[T]) prepared(ctx context.Context, prefix string) ([]string, error) {
	rows, err := w.ctl.Query(ctx, "SELECT gid FROM pg_prepared_xacts WHERE database = current_database() AND starts_with(gid, $1)", prefix)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// rollback rolls back prepared transaction gid; one resolved meanwhile
// (no longer prepared) is no error.
func (w *appendWriter[T]) rollback(ctx context.Context, gid string) error {
	_, err := w.ctl.Exec(ctx, "ROLLBACK PREPARED "+quote(gid))
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42704" {
		return nil
	}
	return err
}

// createMarkers creates the marker table if it is missing, under an
// advisory lock so that concurrent subtasks do not race.
func (w *appendWriter[T]) createMarkers(ctx context.Context) error {
	name := w.s.markers.Sanitize()
	err := pgx.BeginFunc(ctx, w.ctl, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", name); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+name+` (
			job_id text NOT NULL, subtask int NOT NULL, checkpoint bigint NOT NULL,
			committed_at timestamptz NOT NULL DEFAULT now(),
			PRIMARY KEY (job_id, subtask, checkpoint))`)
		return err
	})
	if err != nil {
		return w.s.errorf(err, "creating the marker table %s", w.s.opts.MarkerTable)
	}
	return nil
}

// quote returns s as an SQL string literal.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

var _ connector.Committer = (*appendWriter[int])(nil)
