// Command shop is a program built on weir's command line: it registers
// one job of its own and gets run, the cluster commands, savepoints and
// the dashboard, under its own name and without weir's demo jobs.
//
//	go build -o shop . && ./shop run totals --input orders.jsonl --output out \
//	    --guarantee exactly-once --checkpoint-interval 1s --state-dir state
package main

import (
	"errors"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/connectors/file"
)

// Order is one line of the input: {"customer": "ann", "cents": 1250}.
type Order struct {
	Customer string `json:"customer"`
	Cents    int64  `json:"cents"`
}

// Total is one line of the output: a customer's running total.
type Total struct {
	Customer string `json:"customer"`
	Cents    int64  `json:"cents"`
}

// runningTotal keeps each customer's total in keyed state, which
// checkpoints save and restores bring back.
type runningTotal struct {
	sum *weir.ValueState[int64, string]
}

func (r *runningTotal) Open(sc *weir.StateContext[string]) error {
	r.sum = weir.NewValueState[int64](sc, "sum")
	return nil
}

func (r *runningTotal) ProcessElement(ctx *weir.KeyedContext[string, Total], o Order) error {
	sum, _ := r.sum.Value()
	sum += o.Cents
	r.sum.Update(sum)
	ctx.Emit(Total{Customer: o.Customer, Cents: sum})
	return nil
}

func init() {
	cli.RegisterJob(cli.Job{
		Name:  "totals",
		Short: "Keep a running total of order amounts per customer",
		Flags: func(fs *cli.FlagSet) cli.Builder {
			input := fs.String("input", "", "JSON-lines file of orders")
			return func(p *weir.Pipeline, cfg cli.JobConfig) error {
				if *input == "" {
					return errors.New("--input is required")
				}
				// One reader keeps each customer's orders in file order, so
				// the running totals are the same in every run.
				orders := weir.FromSource(p, "orders", file.JSONLines[Order](file.Options{OnMalformed: cfg.OnMalformed, Malformed: cfg.Malformed}, *input),
					weir.SourceParallelism(1))
				byCustomer := weir.KeyBy(orders, func(o Order) string { return o.Customer })
				totals := weir.Process(byCustomer, func() *runningTotal { return &runningTotal{} })
				weir.To(totals, "output", cli.OutputSink[Total](cfg))
				return nil
			}
		},
	})
}

func main() { cli.Main(cli.WithoutBuiltins()) }
