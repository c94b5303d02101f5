package tables

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
	"github.com/weir-stream/weir/internal/testenv"
)

// pgTable is a table of a key, a name and a DECIMAL amount.
func pgTable(opts map[string]string) Table {
	o := map[string]string{"connector": "postgres", "url": "postgres://localhost:1/db", "table-name": "accounts"}
	for k, v := range opts {
		if v == "" {
			delete(o, k)
		} else {
			o[k] = v
		}
	}
	return Table{Name: "accounts", Options: o, PrimaryKey: []int{0}, Columns: []Column{
		{Path: []string{"id"}, Type: types.BigIntType},
		{Path: []string{"name"}, Type: types.VarcharType},
		{Path: []string{"amount"}, Type: types.DecimalOf(10, 2)},
		{Path: []string{"at"}, Type: types.TimestampType},
	}}
}

func TestPostgresAndNatsTablesRejectBadOptionsAndColumns(t *testing.T) {
	noKey := pgTable(nil)
	noKey.PrimaryKey = nil
	nested := pgTable(nil)
	nested.Columns = append(nested.Columns, Column{Path: []string{"p", "x"}, Type: types.IntType})
	natsTable := func(kv ...string) Table {
		tb := allTypes(map[string]string{"connector": "nats", "url": "nats://localhost:1", "subject": "s", "format": "json"})
		for i := 0; i+1 < len(kv); i += 2 {
			tb.Options[kv[i]] = kv[i+1]
		}
		return tb
	}
	for _, c := range []struct {
		name     string
		tb       Table
		updating bool
		want     error
		says     string
	}{
		{"missing table-name", pgTable(map[string]string{"table-name": ""}), false, ErrOption, `"table-name"`},
		{"bad url", pgTable(map[string]string{"url": "postgres://host:notaport/db"}), false, ErrOption, "URL"},
		{"bad batch", pgTable(map[string]string{"sink.buffer-flush.max-rows": "0"}), false, ErrOption, "sink.buffer-flush.max-rows"},
		{"updating without key", noKey, true, ErrOption, "PRIMARY KEY"},
		{"nested column", nested, false, ErrColumn, "column p.x"},
		{"nats csv", natsTable("format", "csv"), false, ErrFormat, "csv"},
		{"nats subject", natsTable("subject", ""), false, ErrOption, "subject"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewSink(c.tb, c.updating)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "table "+c.tb.Name) {
				t.Fatalf("got %v, want %v saying %s", err, c.want, c.says)
			}
		})
	}
	if _, err := NewSink(natsTable(), true); err != nil {
		t.Fatal(err)
	}
}

func TestPostgresURLTakesJDBCFormAndCredentials(t *testing.T) {
	o := options{m: map[string]string{"url": "jdbc:postgresql://db:5432/shop", "username": "ann", "password": "pw"}}
	if got := pgURL(o); got != "postgresql://ann:pw@db:5432/shop" {
		t.Fatalf("got %s", got)
	}
}

// An upserting postgres sink drops -U rows and refuses deletes with an
// error no restart cures.
func TestUpsertingSinksDropUpdateBeforeAndPostgresRefusesDeletes(t *testing.T) {
	refuse := connector.ConfigError(errors.New("no deletes"))
	conv := dropUpdateBefore(refuse)()
	out, err := conv(nil, []row.Row{{Op: row.Insert}, {Op: row.UpdateBefore}, {Op: row.UpdateAfter}})
	if err != nil || len(out) != 2 || out[1].Op != row.UpdateAfter {
		t.Fatalf("got %v, %v", out, err)
	}
	if _, err := conv(nil, []row.Row{{Op: row.Delete}}); !errors.Is(err, connector.ErrConfig) {
		t.Fatalf("a delete: %v", err)
	}
	if out, _ := dropUpdateBefore(nil)()(nil, []row.Row{{Op: row.Delete}}); len(out) != 1 {
		t.Fatal("without a refusal a delete passes")
	}
}

func TestPostgresSinkAppendsAndUpsertsThroughAServer(t *testing.T) {
	url := testenv.Require(t, "WEIR_POSTGRES_URL")
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	name := fmt.Sprintf("weir_sql_tables_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6)
	if _, err := conn.Exec(t.Context(), "CREATE TABLE "+name+" (id bigint PRIMARY KEY, name text, amount numeric(10,2), at timestamp)"); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(context.Background(), "DROP TABLE "+name)
	tb := pgTable(map[string]string{"url": url, "table-name": name})
	r := func(op row.Op, id int64, n string, cents int64) row.Row {
		return row.Row{Op: op, V: []row.Value{row.BigInt(id), row.String(n), row.Decimal(cents), row.Timestamp(1704067200000)}}
	}
	for _, c := range []struct {
		updating bool
		rows     []row.Row
	}{
		{false, []row.Row{r(row.Insert, 1, "a", 105), r(row.Insert, 2, "b", 0)}},
		{true, []row.Row{r(row.UpdateBefore, 1, "a", 105), r(row.UpdateAfter, 1, "a2", -250), r(row.Insert, 3, "c", 1)}},
	} {
		sink, err := NewSink(tb, c.updating)
		if err != nil {
			t.Fatal(err)
		}
		p := weir.NewPipeline(weir.WithGuarantee(weir.ExactlyOnce), weir.WithCheckpoints(weir.CheckpointConfig{Interval: 20 * time.Millisecond}))
		weir.To(weir.FromSource(p, "rows", collection.Of(c.rows...)), "out", sink)
		if err := p.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := conn.Query(t.Context(), "SELECT id || ' ' || name || ' ' || amount::text || ' ' || at::text FROM "+name+" ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1 a2 -2.50 2024-01-01 00:00:00", "2 b 0.00 2024-01-01 00:00:00", "3 c 0.01 2024-01-01 00:00:00"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
}
