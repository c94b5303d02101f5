package cli_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	weirapi "github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/cli/jobs"
	"github.com/weir-stream/weir/internal/testenv"
)

// keyCountRows reads keycount rows from a table as the JSON lines the
// file sink would have written.
func keyCountRows(t *testing.T, url, table string) []string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(t.Context(), "SELECT key, window_start, window_end, count FROM "+table)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var k jobs.KeyCount
		if err := r.Scan(&k.Key, &k.WindowStart, &k.WindowEnd, &k.Count); err != nil {
			return "", err
		}
		b, err := json.Marshal(k)
		return string(b), err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// countRows returns the rows of table, 0 if the job has not created it yet.
func countRows(t *testing.T, conn *pgx.Conn, table string) int {
	t.Helper()
	var n int
	err := conn.QueryRow(t.Context(), "SELECT count(*) FROM "+table).Scan(&n)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// keycount-postgres is killed with SIGKILL three times and restored with
// --restore latest each time; the table then holds exactly the rows of a
// failure-free keycount run: nothing lost, nothing twice.
func TestPostgresExactlyOnceThroughSIGKILL(t *testing.T) {
	for _, mode := range []string{"append", "upsert"} {
		t.Run(mode, func(t *testing.T) { testPostgresThroughKills(t, mode) })
	}
}

func testPostgresThroughKills(t *testing.T, mode string) {
	if testing.Short() {
		t.Skip("kills a separately built weir binary; -race -short adds nothing to it")
	}
	url := testenv.Require(t, "WEIR_POSTGRES_URL")
	dir := t.TempDir()
	gen := []string{"--events", "300000", "--keys", "50", "--window", "100ms", "-p", "2", "--progress", "off"}
	ref := filepath.Join(dir, "ref")
	if out, err := exec.Command(weirBinary(t), append(append([]string{"run", "keycount"}, gen...), "--output", ref)...).CombinedOutput(); err != nil {
		t.Fatalf("reference run: %v\n%s", err, out)
	}
	table := fmt.Sprintf("keycount_kill_%s_%d", mode, syscall.Getpid())
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), "DROP TABLE IF EXISTS "+table); err != nil {
		t.Fatal(err)
	}
	job := append(append([]string{"run", "keycount-postgres"}, gen...),
		"--postgres-url", url, "--table", table, "--mode", mode, "--create-table",
		"--guarantee", "exactly-once", "--checkpoint-interval", "50ms",
		"--state-dir", filepath.Join(dir, "state"), "--rate", "100000", "--log-checkpoints")
	want := lines(t, ref)
	kills, midway := 0, 0
	var seen []int
	for i := range 3 {
		args := job
		if i > 0 {
			args = append(args, "--restore", "latest")
		}
		// Kill once this run has committed rows of its own: after a
		// checkpoint completes, the table has more rows than when the
		// run started. (A fixed number of checkpoints is no such event:
		// on a loaded machine they may all complete before a window
		// fires.)
		before := countRows(t, conn, table)
		committed := func(line string) bool {
			return strings.Contains(line, " completed in ") && countRows(t, conn, table) > before
		}
		if killWhen(t, committed, args...) {
			kills++
			n := len(keyCountRows(t, url, table))
			seen = append(seen, n)
			if n > 0 && n < len(want) {
				midway++
			}
		}
	}
	if midway == 0 {
		t.Fatalf("no kill happened with part of the output committed (rows after each kill: %v): the test proves nothing", seen)
	}
	res, err := exec.Command(weirBinary(t), append(job, "--restore", "latest")...).CombinedOutput()
	if err != nil {
		t.Fatalf("restored run: %v\n%s", err, res)
	}
	if !strings.Contains(string(res), "restoring checkpoint") {
		t.Fatalf("no restore reported:\n%s", res)
	}
	if err := cli.VerifyLines(weirapi.ExactlyOnce, want, keyCountRows(t, url, table)); err != nil {
		t.Fatalf("table after %d kills and restores is not exactly-once: %v", kills, err)
	}
	var prepared int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM pg_prepared_xacts WHERE starts_with(gid, $1)", "weir/"+table+"/").Scan(&prepared); err != nil {
		t.Fatal(err)
	}
	if prepared != 0 {
		t.Fatalf("%d prepared transactions left behind", prepared)
	}
	t.Logf("%s: %d kills, rows visible after each: %v, %d in the end", mode, kills, seen, len(want))
}

// A missing table fails the job at start with an error naming it.
func TestPostgresJobNamesMissingTable(t *testing.T) {
	url := testenv.Require(t, "WEIR_POSTGRES_URL")
	code, _, stderr := weir(t, "run", "keycount-postgres", "--events", "1000", "--postgres-url", url, "--table", "no_such_keycount_table")
	if code != 1 || !strings.Contains(stderr, "table no_such_keycount_table does not exist") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	code, _, stderr = weir(t, "run", "keycount-postgres", "--postgres-url", url, "--mode", "merge")
	if code != 2 || !strings.Contains(stderr, `mode must be "append" or "upsert", not "merge"`) {
		t.Fatalf("bad mode: exit %d\n%s", code, stderr)
	}
}
