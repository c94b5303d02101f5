// Command frauddetection is Flink's fraud-detection walkthrough on weir:
// it reads a fixed list of credit card transactions and prints an alert
// for every account on which a transaction under $1 is followed, within a
// minute, by one over $500. The detector is in detector.go; its tests
// (detector_test.go) drive it with package weirtest/harness, and run
// the whole pipeline once.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/connectors/stdout"
)

// transactions is the input: account 3 makes a small payment and then a
// large one, the pattern the detector looks for.
var transactions = []Transaction{
	{AccountID: 1, Amount: 188.23, Timestamp: 1_000},
	{AccountID: 2, Amount: 374.79, Timestamp: 2_000},
	{AccountID: 3, Amount: 0.09, Timestamp: 3_000},
	{AccountID: 4, Amount: 478.75, Timestamp: 4_000},
	{AccountID: 3, Amount: 712.00, Timestamp: 5_000},
	{AccountID: 1, Amount: 0.50, Timestamp: 6_000},
	{AccountID: 1, Amount: 42.00, Timestamp: 7_000},
	{AccountID: 1, Amount: 999.99, Timestamp: 8_000},
}

// pipeline builds the job, reading txns and writing alerts to sink.
func pipeline(txns []Transaction, sink func(weir.Stream[Alert])) *weir.Pipeline {
	p := weir.NewPipeline(weir.WithName("fraud-detection"))
	src := weir.FromSource(p, "transactions", collection.Of(txns...))
	sink(DetectFraud(src))
	return p
}

func main() {
	p := pipeline(transactions, func(alerts weir.Stream[Alert]) {
		weir.To(alerts, "alerts", stdout.JSON[Alert]())
	})
	if err := p.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
