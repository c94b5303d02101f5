package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/connectors/postgres"
	"github.com/weir-stream/weir/internal/testenv"
)

// bruteForce joins orders and payments by a loop over every pair.
func bruteForce(orders []Order, payments []Payment) []PaidOrder {
	var out []PaidOrder
	for _, o := range orders {
		for _, p := range payments {
			if p.OrderID != o.ID {
				continue
			}
			status := "paid"
			if p.Cents < o.Cents {
				status = "underpaid"
			}
			out = append(out, PaidOrder{o.ID, o.Customer, o.Cents, p.Cents, p.Method, status})
		}
	}
	return out
}

func byOrderID(a, b PaidOrder) int { return int(a.OrderID - b.OrderID) }

// The join gives each paid order once, whichever of the order and its
// payment comes first (here: in parallel subtasks, in any interleaving).
func TestJoin(t *testing.T) {
	orders, payments := Sample(1, 200)
	want := bruteForce(orders, payments)
	if len(want) != 160 {
		t.Fatalf("the sample has %d paid orders, want 160 (every fifth unpaid)", len(want))
	}
	sink := collection.NewSink[PaidOrder]()
	p := weir.NewPipeline(weir.WithParallelism(2))
	weir.To(Join(weir.FromSource(p, "orders", collection.Of(orders...)), weir.FromSource(p, "payments", collection.Of(payments...))), "out", sink)
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := slices.SortedFunc(slices.Values(sink.Records()), byOrderID)
	if !slices.Equal(got, want) {
		t.Fatalf("got %d rows, want %d:\ngot  %v\nwant %v", len(got), len(want), got, want)
	}
}

var names atomic.Int64

// uniqueName returns a topic or table name no other test run uses.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s_%d_%d_%d", prefix, os.Getpid(), time.Now().UnixNano()%1e6, names.Add(1))
}

// readTable returns the table's rows in order id order.
func readTable(t *testing.T, url, table string) []PaidOrder {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(t.Context(), "SELECT order_id, customer, cents, paid_cents, method, status FROM "+table+" ORDER BY order_id")
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[PaidOrder])
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// dropAfter drops table when the test ends.
func dropAfter(t *testing.T, url, table string) {
	t.Cleanup(func() {
		if conn, err := pgx.Connect(context.Background(), url); err == nil {
			conn.Exec(context.Background(), "DROP TABLE IF EXISTS "+table)
			conn.Close(context.Background())
		}
	})
}

// deleteTopicsAfter deletes the topics when the test ends.
func deleteTopicsAfter(t *testing.T, brokers []string, topics ...string) {
	t.Cleanup(func() {
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
		if err != nil {
			return
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		kadm.NewClient(cl).DeleteTopics(ctx, topics...)
	})
}

// The job reads the topics to their end with tasks killed at random
// moments and at points of the checkpoint protocol, and the table holds
// exactly the join's rows: none lost, none twice (a duplicate would also
// violate the primary key), none from a rolled-back attempt. In Append
// mode by prepared transactions, in Upsert mode by idempotent writes.
func TestPaidOrdersExactlyOnceUnderFailures(t *testing.T) {
	brokers := strings.Split(testenv.Require(t, "WEIR_KAFKA_BROKERS"), ",")
	url := testenv.Require(t, "WEIR_POSTGRES_URL")
	ordersTopic, paymentsTopic := uniqueName("orders"), uniqueName("payments")
	deleteTopicsAfter(t, brokers, ordersTopic, paymentsTopic)
	orders, payments := Sample(1, 500)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := Produce(ctx, brokers, ordersTopic, paymentsTopic, orders, payments); err != nil {
		t.Fatal(err)
	}
	want := bruteForce(orders, payments)

	for _, mode := range []postgres.Mode{postgres.Append, postgres.Upsert} {
		t.Run(mode.String(), func(t *testing.T) {
			injected := 0
			for seed := uint64(1); seed <= 10 && injected < 2; seed++ {
				table := uniqueName("paid_orders")
				dropAfter(t, url, table)
				if err := CreateTable(ctx, url, table); err != nil {
					t.Fatal(err)
				}
				p, err := Build(Config{Brokers: brokers, OrdersTopic: ordersTopic, PaymentsTopic: paymentsTopic, Bounded: true,
					PostgresURL: url, Table: table, Mode: mode, Interval: 10 * time.Millisecond},
					weir.WithParallelism(2), weir.WithInjectedFailures(2, seed), weir.WithFailureWindow(100*time.Millisecond),
					weir.WithRestartStrategy("fixed-delay", 100, time.Millisecond, 0, 0))
				if err != nil {
					t.Fatal(err)
				}
				if err := p.Run(ctx); err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				n := p.Report().Injected
				if got := readTable(t, url, table); !slices.Equal(got, want) {
					t.Fatalf("seed %d, %d failures injected: the table has %d rows, want the join's %d:\ngot  %v\nwant %v",
						seed, n, len(got), len(want), got, want)
				}
				t.Logf("seed %d: %d failures injected, the table holds the join", seed, n)
				injected += n
			}
			if injected == 0 {
				t.Fatal("no failure was injected: the exactly-once run proved nothing")
			}
		})
	}
}

// The command writes sample data to fresh topics, creates the table and
// runs the job over what the topics hold.
func TestCommandLine(t *testing.T) {
	brokers := testenv.Require(t, "WEIR_KAFKA_BROKERS")
	url := testenv.Require(t, "WEIR_POSTGRES_URL")
	ordersTopic, paymentsTopic, table := uniqueName("orders"), uniqueName("payments"), uniqueName("paid_orders")
	deleteTopicsAfter(t, strings.Split(brokers, ","), ordersTopic, paymentsTopic)
	dropAfter(t, url, table)
	var stderr strings.Builder
	err := run(t.Context(), []string{"--brokers", brokers, "--postgres", url, "--orders", ordersTopic, "--payments", paymentsTopic,
		"--table", table, "--sample", "50", "--bounded", "--checkpoint-interval", "10ms"}, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if got, want := readTable(t, url, table), bruteForce(Sample(1, 50)); !slices.Equal(got, want) {
		t.Fatalf("table = %v, want %v", got, want)
	}
}

func TestCommandLineNeedsPostgres(t *testing.T) {
	var stderr strings.Builder
	if err := run(t.Context(), []string{"--bounded"}, &stderr); err == nil || !strings.Contains(err.Error(), "--postgres") {
		t.Fatalf("run without --postgres: %v, want an error naming it", err)
	}
	if err := run(t.Context(), []string{"--postgres", "postgres://x", "--mode", "merge"}, &stderr); err == nil || !strings.Contains(err.Error(), "mode") {
		t.Fatalf("run with --mode merge: %v, want an error about the mode", err)
	}
}
