package main

import (
	"github.com/weir-stream/weir"
)

// Transaction is a payment from an account, as the source delivers it.
type Transaction struct {
	AccountID int64
	Amount    float64
	Timestamp int64 // epoch milliseconds; the detector, like Flink's, works on processing time
}

// Alert says that an account made a suspicious pair of transactions.
type Alert struct {
	AccountID int64
}

const (
	// A small transaction followed by a large one within a minute, on
	// the same account, raises an alert: a thief testing a stolen card
	// before spending with it.
	smallAmount = 1.00
	largeAmount = 500.00
	oneMinute   = 60 * 1000 // milliseconds of processing time
)

// FraudDetector is Flink's fraud-detection walkthrough as a
// weir.KeyedProcessFunction keyed by account. Its state per account is a
// flag, set by a small transaction, and the processing-time timer that
// clears the flag a minute later; a large transaction while the flag is
// set raises an alert. Any transaction that is not small clears the flag
// and deletes the timer.
type FraudDetector struct {
	flag  *weir.ValueState[bool, int64]
	timer *weir.ValueState[int64, int64]
}

// Open creates the detector's state handles.
func (d *FraudDetector) Open(sc *weir.StateContext[int64]) error {
	d.flag = weir.NewValueState[bool](sc, "flag")
	d.timer = weir.NewValueState[int64](sc, "timer")
	return nil
}

// ProcessElement checks t against the account's flag, then sets the flag
// if t is small.
func (d *FraudDetector) ProcessElement(ctx *weir.KeyedContext[int64, Alert], t Transaction) error {
	if _, lastWasSmall := d.flag.Value(); lastWasSmall {
		if t.Amount > largeAmount {
			ctx.Emit(Alert{AccountID: t.AccountID})
		}
		d.cleanUp(ctx)
	}
	if t.Amount < smallAmount {
		d.flag.Update(true)
		timer := ctx.ProcessingTime() + oneMinute
		ctx.RegisterProcessingTimer(timer)
		d.timer.Update(timer)
	}
	return nil
}

// OnTimer clears the account's flag a minute after the small transaction
// that set it.
func (d *FraudDetector) OnTimer(ctx *weir.KeyedContext[int64, Alert], _ int64, _ weir.TimeDomain) error {
	d.timer.Clear()
	d.flag.Clear()
	return nil
}

// cleanUp deletes the account's timer and clears its state.
func (d *FraudDetector) cleanUp(ctx *weir.KeyedContext[int64, Alert]) {
	if t, ok := d.timer.Value(); ok {
		ctx.DeleteProcessingTimer(t)
	}
	d.timer.Clear()
	d.flag.Clear()
}

// byAccount is the key of a transaction.
func byAccount(t Transaction) int64 { return t.AccountID }

// newDetector returns the function of one subtask.
func newDetector() weir.KeyedProcessFunction[int64, Transaction, Alert] { return &FraudDetector{} }

// DetectFraud is the job's dataflow: transactions keyed by account into
// the detector.
func DetectFraud(txns weir.Stream[Transaction]) weir.Stream[Alert] {
	return weir.Process(weir.KeyBy(txns, byAccount), newDetector, weir.Name("fraud-detector"), weir.UID("fraud-detector"))
}
