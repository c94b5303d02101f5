package postgres_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/postgres"
)

// The append sink's two-phase commit: rows are invisible until their
// checkpoint's transaction is committed, a prepared transaction survives
// the writer (its process) and is committed by the next attempt's
// Recover, a repeated commit is a no-op, and a restore aborts what was
// prepared after the restored checkpoint.
func TestAppendCommitsWithCheckpoints(t *testing.T) {
	url, conn := db(t)
	ctx := t.Context()
	table := newTable(t, conn, "id bigint, name text, amount double precision")
	s, err := postgres.New(postgres.Options[event]{URL: url, Table: table, JobID: table})
	if err != nil {
		t.Fatal(err)
	}
	open := func(attempt int) (connector.Writer[event], connector.Committer) {
		w, err := s.Open(ctx, connector.SubtaskInfo{Operator: "out", Subtask: 0, Parallelism: 1, Attempt: attempt})
		if err != nil {
			t.Fatal(err)
		}
		return w, w.(connector.Committer)
	}
	ids := func() []int64 {
		var out []int64
		for _, e := range readEvents(t, conn, table) {
			out = append(out, e.ID)
		}
		return out
	}
	ev := events(10)

	w, c := open(0)
	must(t, c.Recover(ctx, 0, nil))
	must(t, w.Write(ctx, ev[0:2]))
	t1, err := c.PreCommit(ctx, 1)
	must(t, err)
	must(t, w.Write(ctx, ev[2:3]))
	t2, err := c.PreCommit(ctx, 2)
	must(t, err)
	must(t, w.Write(ctx, ev[3:4])) // after the last barrier: never visible
	must(t, w.Flush(ctx))
	if got := ids(); len(got) != 0 {
		t.Fatalf("visible before any commit: %v", got)
	}
	if empty, err := c.PreCommit(ctx, 3); err != nil || empty == nil {
		// ev[3] was flushed into checkpoint 3's transaction.
		t.Fatalf("PreCommit 3: %q, %v", empty, err)
	}
	must(t, c.Commit(ctx, t1))
	if got := ids(); !slices.Equal(got, []int64{0, 1}) {
		t.Fatalf("after commit 1: %v", got)
	}
	// The process dies: checkpoint 2 completed but was not committed,
	// checkpoint 3 did not complete. The next attempt restores 2.
	must(t, w.Close())
	w, c = open(1)
	must(t, c.Recover(ctx, 2, [][]byte{t1, t2}))
	if got := ids(); !slices.Equal(got, []int64{0, 1, 2}) {
		t.Fatalf("after recovering checkpoint 2: %v, want [0 1 2]", got)
	}
	must(t, c.Commit(ctx, t2)) // again: a no-op
	var prepared int
	must(t, conn.QueryRow(ctx, "SELECT count(*) FROM pg_prepared_xacts WHERE starts_with(gid, $1)", "weir/"+table+"/").Scan(&prepared))
	if prepared != 0 {
		t.Fatalf("%d prepared transactions left after Recover; checkpoint 3's must be aborted", prepared)
	}
	must(t, w.Write(ctx, ev[3:5]))
	t3, err := c.PreCommit(ctx, 3)
	must(t, err)
	must(t, c.Commit(ctx, t3))
	if got := ids(); !slices.Equal(got, []int64{0, 1, 2, 3, 4}) {
		t.Fatalf("final rows %v, want [0 1 2 3 4]", got)
	}
	err = c.Commit(ctx, []byte("weir/"+table+"/0/99"))
	if err == nil || !strings.Contains(err.Error(), "is lost") {
		t.Fatalf("committing a transaction that never existed: %v", err)
	}
	must(t, w.Close())
}

// Checkpoint ids start at 1 again in a run that does not restore: its
// markers must not collide with an earlier run's.
func TestFreshRunReusesCheckpointIDs(t *testing.T) {
	url, conn := db(t)
	ctx := t.Context()
	table := newTable(t, conn, "id bigint, name text, amount double precision")
	s, err := postgres.New(postgres.Options[event]{URL: url, Table: table})
	must(t, err)
	for run := range 2 {
		w, err := s.Open(ctx, connector.SubtaskInfo{Operator: "out", Parallelism: 1})
		must(t, err)
		c := w.(connector.Committer)
		must(t, c.Recover(ctx, 0, nil))
		must(t, w.Write(ctx, events(3)))
		txn, err := c.PreCommit(ctx, 1)
		must(t, err)
		must(t, c.Commit(ctx, txn))
		must(t, w.Close())
		if got := len(readEvents(t, conn, table)); got != 3*(run+1) {
			t.Fatalf("run %d: %d rows, want %d", run, got, 3*(run+1))
		}
	}
}

// An unreachable server: Open retries with backoff, then fails naming the
// address and the number of attempts.
func TestUnreachableServerRetriesThenFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	var retries []time.Duration
	s, err := postgres.New(postgres.Options[event]{URL: "postgres://weir@" + addr + "/weir?sslmode=disable&connect_timeout=2",
		Table: "events", ConnectTimeout: time.Second,
		OnRetry: func(_ int, err error, wait time.Duration) { retries = append(retries, wait) }})
	must(t, err)
	_, err = s.Open(t.Context(), connector.SubtaskInfo{Operator: "out", Parallelism: 1})
	if err == nil {
		t.Fatal("Open succeeded against a closed port")
	}
	if !strings.Contains(err.Error(), "cannot reach database weir at 127.0.0.1") || !strings.Contains(err.Error(), "attempts") {
		t.Fatalf("error does not say what could not be reached: %v", err)
	}
	if len(retries) < 2 || retries[1] <= retries[0] {
		t.Fatalf("want at least two retries with growing waits, got %v", retries)
	}
	// A cancelled context stops the retries.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Open(ctx, connector.SubtaskInfo{Operator: "out", Parallelism: 1}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Open with a cancelled context: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A fresh start at a lower parallelism resolves what an earlier run's
// subtasks beyond it left: their prepared transactions are rolled back
// (they would hold their locks forever) and their commit markers deleted
// (after a rescale up, a marker with the number and checkpoint of a new
// subtask's lost transaction would pass it for committed).
func TestAFreshStartResolvesSubtasksBeyondItsParallelism(t *testing.T) {
	url, conn := db(t)
	ctx := t.Context()
	table := newTable(t, conn, "id bigint, name text, amount double precision")
	s, err := postgres.New(postgres.Options[event]{URL: url, Table: table, JobID: table})
	must(t, err)
	open := func(sub, par int) (connector.Writer[event], connector.Committer) {
		w, err := s.Open(ctx, connector.SubtaskInfo{Operator: "out", Subtask: sub, Parallelism: par})
		must(t, err)
		return w, w.(connector.Committer)
	}
	prepared := func() int {
		var n int
		must(t, conn.QueryRow(ctx, "SELECT count(*) FROM pg_prepared_xacts WHERE starts_with(gid, $1)", "weir/"+table+"/").Scan(&n))
		return n
	}
	markersBeyond := func(par int) int {
		var n int
		must(t, conn.QueryRow(ctx, "SELECT count(*) FROM weir_sink_commits WHERE job_id = $1 AND subtask >= $2", table, par).Scan(&n))
		return n
	}
	// The earlier run, at parallelism 3: checkpoint 1 committed, 2 only
	// prepared when it stopped.
	for sub := range 3 {
		w, c := open(sub, 3)
		must(t, c.Recover(ctx, 0, nil))
		must(t, w.Write(ctx, events(2)))
		txn, err := c.PreCommit(ctx, 1)
		must(t, err)
		must(t, c.Commit(ctx, txn))
		must(t, w.Write(ctx, events(1)))
		_, err = c.PreCommit(ctx, 2)
		must(t, err)
		must(t, w.Close())
	}
	if got := prepared(); got != 3 {
		t.Fatalf("%d transactions prepared before the fresh start, want 3", got)
	}
	if got := markersBeyond(1); got != 2 {
		t.Fatalf("%d markers of subtasks 1 and 2 before the fresh start, want 2", got)
	}
	w, c := open(0, 1)
	must(t, c.Recover(ctx, 0, nil))
	must(t, w.Close())
	if got := prepared(); got != 0 {
		t.Errorf("%d transactions of the earlier run still prepared after a fresh start, want 0", got)
	}
	if got := markersBeyond(1); got != 0 {
		t.Errorf("%d markers of subtasks beyond the parallelism after a fresh start, want 0", got)
	}
	if got := len(readEvents(t, conn, table)); got != 6 {
		t.Errorf("%d rows, want the 6 that checkpoint 1 committed", got)
	}
}
