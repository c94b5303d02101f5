package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/postgres"
	"github.com/weir-stream/weir/internal/testenv"
)

// benchRows is what one benchmark iteration writes: one checkpoint
// interval's worth of rows.
const benchRows = 10000

// BenchmarkSink writes benchRows rows per iteration through one writer
// and reports rows/s: COPY without checkpoints, COPY in an exactly-once
// transaction (PreCommit + Commit per iteration, i.e. one checkpoint per
// 10,000 rows), upsert, and a row-by-row INSERT baseline.
func BenchmarkSink(b *testing.B) {
	url, conn := dbB(b)
	recs := events(benchRows)
	for _, tc := range []struct {
		name string
		mode postgres.Mode
		txn  bool
	}{{"copy", postgres.Append, false}, {"copy-exactly-once", postgres.Append, true}, {"upsert", postgres.Upsert, false}} {
		b.Run(tc.name, func(b *testing.B) {
			table := benchTable(b, conn)
			s, err := postgres.New(postgres.Options[event]{URL: url, Table: table, Mode: tc.mode, JobID: table})
			if err != nil {
				b.Fatal(err)
			}
			w, err := s.Open(b.Context(), connector.SubtaskInfo{Operator: "bench", Parallelism: 1})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			c, _ := w.(connector.Committer)
			if tc.txn {
				if err := c.Recover(b.Context(), 0, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := range b.N {
				renumber(recs, i)
				for j := 0; j < len(recs); j += 1024 {
					if err := w.Write(b.Context(), recs[j:min(j+1024, len(recs))]); err != nil {
						b.Fatal(err)
					}
				}
				if tc.txn {
					txn, err := c.PreCommit(b.Context(), int64(i+1))
					if err == nil {
						err = c.Commit(b.Context(), txn)
					}
					if err != nil {
						b.Fatal(err)
					}
				} else if err := w.Flush(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*benchRows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
	b.Run("insert-per-row", func(b *testing.B) {
		table := benchTable(b, conn)
		b.ResetTimer()
		for i := range b.N {
			renumber(recs, i)
			err := pgx.BeginFunc(b.Context(), conn, func(tx pgx.Tx) error {
				for _, r := range recs {
					if _, err := tx.Exec(b.Context(), "INSERT INTO "+table+" (id, name, amount) VALUES ($1, $2, $3)", r.ID, r.Name, r.Amount); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*benchRows)/b.Elapsed().Seconds(), "rows/s")
	})
}

// renumber gives the records of iteration i new primary keys.
func renumber(recs []event, i int) {
	for j := range recs {
		recs[j].ID = int64(i*benchRows + j)
	}
}

func dbB(b *testing.B) (string, *pgx.Conn) {
	url := testenv.Require(b, "WEIR_POSTGRES_URL")
	conn, err := pgx.Connect(b.Context(), url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close(context.Background()) })
	return url, conn
}

func benchTable(b *testing.B, conn *pgx.Conn) string {
	name := fmt.Sprintf("bench_%d", tables.Add(1))
	if _, err := conn.Exec(b.Context(), "DROP TABLE IF EXISTS "+name+"; CREATE TABLE "+name+" (id bigint PRIMARY KEY, name text, amount double precision)"); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Exec(context.Background(), "DROP TABLE "+name) })
	return name
}
