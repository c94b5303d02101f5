package jobs

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/pflag"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/connectors/postgres"
)

// PostgresConfig is where keycount-postgres writes.
type PostgresConfig struct {
	URL         string
	Table       string
	Mode        string
	CreateTable bool
}

func init() {
	register(cli.Job{
		Name:  "keycount-postgres",
		Short: "keycount with its rows written to a PostgreSQL table",
		Long: `Count generated events per key in tumbling event-time windows, as keycount
does, and write the rows (key, window_start, window_end, count) into the
PostgreSQL table --table at --postgres-url.

--mode append (the default) inserts rows with COPY; with --guarantee
exactly-once they are committed with checkpoints by two-phase commit
(PREPARE TRANSACTION; the server needs max_prepared_transactions > 0).
--mode upsert inserts or updates by the primary key (key, window_start),
which is idempotent. --create-table creates the table if it is missing.
See docs/connectors/postgres.md.`,
		Flags: func(fs *pflag.FlagSet) cli.Builder {
			c := KeyCountConfig{}
			fs.Int64Var(&c.Events, "events", 1_000_000, "number of events to generate")
			fs.Int64Var(&c.Keys, "keys", 1000, "number of distinct keys")
			fs.DurationVar(&c.Window, "window", time.Second, "tumbling window size (event time)")
			fs.Int64Var(&c.TPS, "tps", 100_000, "events per second of event time")
			fs.Uint64Var(&c.Seed, "seed", 1, "seed of the key sequence")
			fs.Float64Var(&c.Rate, "rate", 0, "throttle generation to this many events per second of wall-clock time (0: as fast as possible)")
			pc := PostgresConfig{}
			fs.StringVar(&pc.URL, "postgres-url", "", "PostgreSQL connection URL (postgres://user@host:port/db)")
			fs.StringVar(&pc.Table, "table", "keycount", "target table (name or schema.name)")
			fs.StringVar(&pc.Mode, "mode", "append", "append (COPY; two-phase commit with checkpoints) or upsert (idempotent by primary key)")
			fs.BoolVar(&pc.CreateTable, "create-table", false, "create the table if it does not exist")
			cli.MayChangeOnRestore(fs, "events", "rate", "postgres-url", "create-table")
			return func(p *weir.Pipeline, cfg cli.JobConfig) error {
				if err := c.Validate(); err != nil {
					return err
				}
				sink, err := pc.sink()
				if err != nil {
					return err
				}
				var gopts []generator.Option
				if c.Rate > 0 {
					gopts = append(gopts, generator.WithRate(c.Rate))
				}
				rows := keyCounts(p, generator.New(c.Events, c.Event, gopts...), c.Window, 0)
				weir.To(rows, "postgres", connector.Sink[KeyCount](sink))
				return nil
			}
		},
	})
}

// keyCounts counts events per key in tumbling windows of size w.
func keyCounts(p *weir.Pipeline, src connector.Source[KeyEvent], w, delay time.Duration) weir.Stream[KeyCount] {
	events := weir.FromSource(p, "events", src, weir.WithTimestamps(func(e KeyEvent) int64 { return e.Time }, delay))
	windows := weir.WindowBy(weir.KeyBy(events, func(e KeyEvent) int64 { return e.Key }), weir.Tumbling(w))
	counts := weir.AggregateWindow(windows, countEvents{}, weir.Name("count"))
	return weir.Map(counts, func(w weir.Windowed[int64, int64]) KeyCount {
		return KeyCount{Key: w.Key, WindowStart: w.Window.Start, WindowEnd: w.Window.End, Count: w.Value}
	}, weir.Name("format"))
}

// sink checks the flags and returns the PostgreSQL sink, creating the
// table first with --create-table.
func (pc PostgresConfig) sink() (*postgres.Sink[KeyCount], error) {
	if pc.URL == "" {
		return nil, fmt.Errorf("keycount-postgres: --postgres-url is required")
	}
	mode, err := postgres.ParseMode(pc.Mode)
	if err != nil {
		return nil, err
	}
	if pc.CreateTable {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, pc.URL)
		if err != nil {
			return nil, fmt.Errorf("keycount-postgres: connecting to create table %s: %w", pc.Table, err)
		}
		defer conn.Close(context.Background())
		_, err = conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+pgx.Identifier(strings.Split(pc.Table, ".")).Sanitize()+
			" (key bigint NOT NULL, window_start bigint NOT NULL, window_end bigint NOT NULL, count bigint NOT NULL, PRIMARY KEY (key, window_start))")
		if err != nil {
			return nil, fmt.Errorf("keycount-postgres: creating table %s: %w", pc.Table, err)
		}
	}
	return postgres.New(postgres.Options[KeyCount]{URL: pc.URL, Table: pc.Table, Mode: mode})
}
