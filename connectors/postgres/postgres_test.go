package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connector/connectortest"
	"github.com/weir-stream/weir/connectors/postgres"
	"github.com/weir-stream/weir/internal/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// event is the record type of most tests; it maps to columns id, name,
// amount (snake_case of the field names, or the db tag).
type event struct {
	ID     int64
	Name   string `db:"name"`
	Amount float64
}

var tables atomic.Int64

// db connects to the test server.
func db(t *testing.T) (string, *pgx.Conn) {
	t.Helper()
	url := testenv.Require(t, "WEIR_POSTGRES_URL")
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connecting to the test database: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return url, conn
}

// newTable creates a fresh table with the given column definitions and
// returns its name.
func newTable(t *testing.T, conn *pgx.Conn, columns string) string {
	t.Helper()
	name := fmt.Sprintf("t_%s_%d", strings.ToLower(strings.NewReplacer("/", "_", "=", "_", "-", "_").Replace(t.Name())), tables.Add(1))
	if len(name) > 60 {
		name = fmt.Sprintf("t_%d_%s", tables.Add(1), name[len(name)-40:])
	}
	if _, err := conn.Exec(t.Context(), "DROP TABLE IF EXISTS "+name+"; CREATE TABLE "+name+" ("+columns+")"); err != nil {
		t.Fatalf("creating table %s: %v", name, err)
	}
	return name
}

func readEvents(t *testing.T, conn *pgx.Conn, table string) []event {
	t.Helper()
	rows, err := conn.Query(t.Context(), "SELECT id, name, amount FROM "+table+" ORDER BY id, name")
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (event, error) {
		var e event
		err := r.Scan(&e.ID, &e.Name, &e.Amount)
		return e, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func events(n int) []event {
	out := make([]event, n)
	for i := range out {
		out[i] = event{ID: int64(i), Name: fmt.Sprintf("e%d", i%17), Amount: float64(i) / 4}
	}
	return out
}

// tableSink is a sink with its table, for reading back.
type tableSink struct {
	*postgres.Sink[event]
	table string
}

func TestConformance(t *testing.T) {
	url, conn := db(t)
	for _, mode := range []postgres.Mode{postgres.Append, postgres.Upsert} {
		t.Run(mode.String(), func(t *testing.T) {
			connectortest.TestSink(t, connectortest.SinkCase[event]{
				New: func(t *testing.T) connector.Sink[event] {
					table := newTable(t, conn, "id bigint PRIMARY KEY, name text NOT NULL, amount double precision")
					s, err := postgres.New(postgres.Options[event]{URL: url, Table: table, Mode: mode, BatchRows: 50})
					if err != nil {
						t.Fatal(err)
					}
					return tableSink{s, table}
				},
				ReadBack: func(t *testing.T, s connector.Sink[event]) []event {
					return readEvents(t, conn, s.(tableSink).table)
				},
				Records: events(300),
			})
		})
	}
}

func TestUpsertIsIdempotentByKey(t *testing.T) {
	url, conn := db(t)
	table := newTable(t, conn, "id bigint PRIMARY KEY, name text, amount double precision")
	s, err := postgres.New(postgres.Options[event]{URL: url, Table: table, Mode: postgres.Upsert})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Idempotent() {
		t.Fatal("an upsert sink must report Idempotent")
	}
	// The same records three times (as replays after failures would
	// write them), with a key repeated inside one batch: the last wins.
	recs := events(100)
	recs = append(recs, event{ID: 5, Name: "five", Amount: 5})
	want := slices.Clone(recs[:100])
	want[5] = event{ID: 5, Name: "five", Amount: 5}
	for range 3 {
		// Record 100 (key 5 again) goes to the same subtask as record 5,
		// after it.
		if _, err := connectortest.WriteAll(t.Context(), s, recs, 5); err != nil {
			t.Fatal(err)
		}
		if got := readEvents(t, conn, table); !slices.Equal(got, want) {
			t.Fatalf("after upserting again: %d rows, want %d; diff: %s", len(got), len(want),
				connectortest.DiffSequence(got, want))
		}
	}
}

func TestOpenNamesWhatIsWrong(t *testing.T) {
	url, conn := db(t)
	good := newTable(t, conn, "id bigint PRIMARY KEY, name text, amount double precision")
	noKey := newTable(t, conn, "id bigint, name text, amount double precision")
	badType := newTable(t, conn, "id bigint, name integer, amount double precision")
	required := newTable(t, conn, "id bigint, name text, amount double precision, owner text NOT NULL")
	type other struct {
		ID    int64
		Extra string
	}
	for _, tc := range []struct {
		name string
		open func() error
		want string
	}{
		{"missing table", func() error { return open(t, postgres.Options[event]{URL: url, Table: "no_such_table"}) }, "table no_such_table does not exist"},
		{"missing column", func() error { return open(t, postgres.Options[other]{URL: url, Table: good}) }, `has no column "extra" (field Extra); its columns are id, name, amount`},
		{"wrong type", func() error { return open(t, postgres.Options[event]{URL: url, Table: badType}) }, `column "name" of table ` + badType + ` is integer, which field Name (string) cannot be written to`},
		{"unmapped not null", func() error { return open(t, postgres.Options[event]{URL: url, Table: required}) }, `column "owner" of table ` + required + ` is NOT NULL without a default`},
		{"upsert without key", func() error {
			return open(t, postgres.Options[event]{URL: url, Table: noKey, Mode: postgres.Upsert})
		}, "needs a key: the table has no primary key"},
		{"upsert key not mapped", func() error {
			return open(t, postgres.Options[event]{URL: url, Table: good, Mode: postgres.Upsert, Key: []string{"owner"}})
		}, `upsert key column "owner"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.open()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open: %v\nwant an error containing %q", err, tc.want)
			}
		})
	}
	if _, err := postgres.New(postgres.Options[int]{URL: url, Table: good}); err == nil || !strings.Contains(err.Error(), "not a struct") {
		t.Errorf("New with a non-struct record type: %v", err)
	}
	if _, err := postgres.New(postgres.Options[event]{URL: "postgres://x:bad port/", Table: good}); err == nil || !strings.Contains(err.Error(), "does not parse") {
		t.Errorf("New with a bad URL: %v", err)
	}
}

func open[T any](t *testing.T, opts postgres.Options[T]) error {
	s, err := postgres.New(opts)
	if err != nil {
		return err
	}
	w, err := s.Open(t.Context(), connector.SubtaskInfo{Operator: "out", Parallelism: 1})
	if err == nil {
		w.Close()
	}
	return err
}

// A row function instead of struct fields.
func TestRowFunction(t *testing.T) {
	url, conn := db(t)
	table := newTable(t, conn, "id bigint, name text, amount double precision NOT NULL DEFAULT 0")
	s, err := postgres.New(postgres.Options[int]{URL: url, Table: table, Columns: []string{"id", "name"},
		Row: func(i int) []any { return []any{int64(i), fmt.Sprint("n", i)} }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := connectortest.WriteAll(t.Context(), s, []int{1, 2, 3}, 1); err != nil {
		t.Fatal(err)
	}
	got := readEvents(t, conn, table)
	want := []event{{1, "n1", 0}, {2, "n2", 0}, {3, "n3", 0}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
