// Command kafkapostgres joins the orders and payments topics of Kafka by
// order id and writes each paid order as a row of a PostgreSQL table,
// exactly-once:
//
//   - kafka.Source reads both topics; its positions (the offset of every
//     partition) are part of each checkpoint, so a restored job reads on
//     from there;
//   - the join (join.go) keeps whichever of an order and its payment
//     came first in keyed state until the other comes;
//   - the postgres sink in Append mode commits with checkpoints by
//     prepared transactions (two-phase commit), so the table shows the
//     rows of completed checkpoints only, each once; in Upsert mode it
//     writes by primary key instead, idempotent.
//
// The guarantee and checkpoints are set in Go (weir.WithGuarantee,
// weir.WithCheckpoints). The table is created if it is missing.
//
//	go run ./examples/kafkapostgres --brokers localhost:9092 \
//	    --postgres 'postgres://postgres@localhost:5432/shop' --sample 1000 --bounded
//
// --sample N first writes N sample orders and their payments to the
// topics (creating them if missing); --bounded reads what the topics hold
// and ends, without it the job runs until interrupted. main_test.go runs
// the job with injected failures against a real Kafka and PostgreSQL and
// checks the table against the join computed by brute force.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/format"
	"github.com/weir-stream/weir/connectors/kafka"
	"github.com/weir-stream/weir/connectors/postgres"
)

// Config says where the job reads and writes.
type Config struct {
	Brokers        []string
	OrdersTopic    string
	PaymentsTopic  string
	Bounded        bool // read what the topics hold, then end
	PostgresURL    string
	Table          string
	Mode           postgres.Mode
	CheckpointsDir string        // where checkpoints go; in memory if empty
	Interval       time.Duration // between checkpoints
}

// Build adds the job to a pipeline with exactly-once checkpoints and
// returns it; opts come after the job's own options and may override
// them.
func Build(c Config, opts ...weir.Option) (*weir.Pipeline, error) {
	orders, err := kafka.Source(kafka.SourceOptions[Order]{
		Brokers: c.Brokers, Topics: []string{c.OrdersTopic}, Format: format.JSON[Order](), Bounded: c.Bounded})
	if err != nil {
		return nil, err
	}
	payments, err := kafka.Source(kafka.SourceOptions[Payment]{
		Brokers: c.Brokers, Topics: []string{c.PaymentsTopic}, Format: format.JSON[Payment](), Bounded: c.Bounded})
	if err != nil {
		return nil, err
	}
	sink, err := postgres.New(postgres.Options[PaidOrder]{URL: c.PostgresURL, Table: c.Table, Mode: c.Mode})
	if err != nil {
		return nil, err
	}
	p := weir.NewPipeline(append([]weir.Option{
		weir.WithName("paid-orders"),
		weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: c.Interval, StateDir: c.CheckpointsDir}),
	}, opts...)...)
	joined := Join(
		weir.FromSource(p, "orders", orders, weir.SourceUID("orders")),
		weir.FromSource(p, "payments", payments, weir.SourceUID("payments")))
	weir.To(joined, "paid-orders", sink, weir.UID("paid-orders"))
	return p, nil
}

// CreateTable creates the output table if it does not exist.
func CreateTable(ctx context.Context, url, table string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	defer conn.Close(context.Background())
	name := pgx.Identifier(strings.Split(table, ".")).Sanitize()
	if _, err := conn.Exec(ctx, fmt.Sprintf(createTable, name)); err != nil {
		return fmt.Errorf("postgres: creating table %s: %w", table, err)
	}
	return nil
}

// run runs the command with its arguments (without the program name).
func run(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("kafkapostgres", flag.ContinueOnError)
	fs.SetOutput(stderr)
	brokers := fs.String("brokers", "localhost:9092", "Kafka brokers, comma-separated")
	var c Config
	fs.StringVar(&c.OrdersTopic, "orders", "orders", "topic of orders")
	fs.StringVar(&c.PaymentsTopic, "payments", "payments", "topic of payments")
	fs.BoolVar(&c.Bounded, "bounded", false, "read what the topics hold, then end")
	fs.StringVar(&c.PostgresURL, "postgres", "", "PostgreSQL connection URL (required)")
	fs.StringVar(&c.Table, "table", "paid_orders", "table of paid orders, created if missing")
	mode := fs.String("mode", "append", "append (prepared transactions) or upsert (by order id)")
	fs.StringVar(&c.CheckpointsDir, "state-dir", "", "directory of checkpoints (in memory if empty)")
	fs.DurationVar(&c.Interval, "checkpoint-interval", time.Second, "time between checkpoints")
	parallelism := fs.Int("parallelism", 2, "parallelism of every operator")
	restore := fs.Bool("restore", false, "resume from the latest checkpoint in --state-dir")
	sample := fs.Int("sample", 0, "first write this many sample orders and their payments to the topics")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.PostgresURL == "" {
		return errors.New("--postgres is required")
	}
	var err error
	if c.Mode, err = postgres.ParseMode(*mode); err != nil {
		return err
	}
	c.Brokers = strings.Split(*brokers, ",")
	if *sample > 0 {
		orders, payments := Sample(1, *sample)
		if err := Produce(ctx, c.Brokers, c.OrdersTopic, c.PaymentsTopic, orders, payments); err != nil {
			return err
		}
	}
	if err := CreateTable(ctx, c.PostgresURL, c.Table); err != nil {
		return err
	}
	opts := []weir.Option{weir.WithParallelism(*parallelism)}
	if *restore {
		opts = append(opts, weir.WithRestore("latest"))
	}
	p, err := Build(c, opts...)
	if err != nil {
		return err
	}
	return p.Run(ctx)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil && ctx.Err() == nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "kafkapostgres:", err)
		}
		os.Exit(1)
	}
}
