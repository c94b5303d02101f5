package main

import (
	"context"
	"slices"
	"testing"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/weirtest/harness"
)

// newHarness returns the detector in a test harness, its processing time
// at start.
func newHarness(t *testing.T, start int64, opts ...harness.Option) *harness.Process[int64, Transaction, Alert] {
	t.Helper()
	h, err := harness.NewProcess(byAccount, newDetector, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if err := h.SetProcessingTime(start); err != nil {
		t.Fatal(err)
	}
	return h
}

// at moves h's processing time to now and hands it txn.
func at(t *testing.T, h *harness.Process[int64, Transaction, Alert], now int64, txn Transaction) {
	t.Helper()
	if err := h.SetProcessingTime(now); err != nil {
		t.Fatal(err)
	}
	if err := h.ProcessElement(txn, weir.NoTimestamp); err != nil {
		t.Fatal(err)
	}
}

func alerts(h *harness.Process[int64, Transaction, Alert]) []Alert { return harness.Values(h.Output()) }

func TestASmallThenALargeTransactionWithinAMinuteRaisesAnAlert(t *testing.T) {
	h := newHarness(t, 0)
	at(t, h, 1_000, Transaction{AccountID: 7, Amount: 0.50})
	at(t, h, 60_999, Transaction{AccountID: 7, Amount: 600})
	if got, want := alerts(h), []Alert{{AccountID: 7}}; !slices.Equal(got, want) {
		t.Fatalf("alerts = %v, want %v", got, want)
	}
	// The alert used up the flag: another large one raises none.
	at(t, h, 61_000, Transaction{AccountID: 7, Amount: 600})
	if got := alerts(h); len(got) != 1 {
		t.Fatalf("alerts after a second large transaction = %v, want the first only", got)
	}
}

func TestNoAlertOnceTheMinuteIsOver(t *testing.T) {
	h := newHarness(t, 0)
	at(t, h, 1_000, Transaction{AccountID: 7, Amount: 0.50})
	at(t, h, 61_000, Transaction{AccountID: 7, Amount: 600})
	if got := alerts(h); len(got) != 0 {
		t.Fatalf("alerts = %v, want none a minute after the small transaction", got)
	}
}

func TestTheTimerClearsTheFlag(t *testing.T) {
	h := newHarness(t, 0)
	at(t, h, 1_000, Transaction{AccountID: 7, Amount: 0.50})
	if flag, ok, err := harness.Value[bool](h, 7, "flag"); err != nil || !ok || !flag {
		t.Fatalf("flag after a small transaction = %v, %v, %v; want set", flag, ok, err)
	}
	if timer, _, _ := harness.Value[int64](h, 7, "timer"); timer != 61_000 {
		t.Fatalf("timer = %d, want a minute after the transaction, 61000", timer)
	}
	if err := h.SetProcessingTime(60_999); err != nil {
		t.Fatal(err)
	}
	if h.PendingProcessingTimers() != 1 {
		t.Fatalf("pending timers before the minute is over = %d, want 1", h.PendingProcessingTimers())
	}
	if err := h.SetProcessingTime(61_000); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := harness.Value[bool](h, 7, "flag"); ok {
		t.Fatal("the flag is still set after its timer fired")
	}
	if _, ok, _ := harness.Value[int64](h, 7, "timer"); ok {
		t.Fatal("the timer is still in state after it fired")
	}
	if h.PendingProcessingTimers() != 0 {
		t.Fatalf("pending timers after the minute = %d, want 0", h.PendingProcessingTimers())
	}
}

func TestATransactionInBetweenClearsTheFlagAndItsTimer(t *testing.T) {
	h := newHarness(t, 0)
	at(t, h, 1_000, Transaction{AccountID: 7, Amount: 0.50})
	at(t, h, 2_000, Transaction{AccountID: 7, Amount: 42})
	at(t, h, 3_000, Transaction{AccountID: 7, Amount: 600})
	if got := alerts(h); len(got) != 0 {
		t.Fatalf("alerts = %v, want none: the small and the large transaction are not consecutive", got)
	}
	if h.PendingProcessingTimers() != 0 {
		t.Fatalf("pending timers = %d, want the small transaction's deleted", h.PendingProcessingTimers())
	}
}

func TestAccountsAreSeparate(t *testing.T) {
	h := newHarness(t, 0)
	at(t, h, 1_000, Transaction{AccountID: 7, Amount: 0.50})
	at(t, h, 2_000, Transaction{AccountID: 8, Amount: 600})
	if got := alerts(h); len(got) != 0 {
		t.Fatalf("alerts = %v, want none: the transactions are on different accounts", got)
	}
	if flag, _, _ := harness.Value[bool](h, 7, "flag"); !flag {
		t.Fatal("account 8's transaction cleared account 7's flag")
	}
}

func TestTheFlagSurvivesARestart(t *testing.T) {
	h := newHarness(t, 0)
	at(t, h, 1_000, Transaction{AccountID: 7, Amount: 0.50})
	snap, err := h.Snapshot()
	if err != nil {
		t.Fatal(err)
	}

	restored := newHarness(t, 1_000, harness.Restore(snap))
	at(t, restored, 30_000, Transaction{AccountID: 7, Amount: 600})
	if got, want := alerts(restored), []Alert{{AccountID: 7}}; !slices.Equal(got, want) {
		t.Fatalf("alerts after the restart = %v, want %v", got, want)
	}

	// And so does the timer: a minute on, the flag is gone.
	again := newHarness(t, 1_000, harness.Restore(snap))
	if err := again.SetProcessingTime(61_000); err != nil {
		t.Fatal(err)
	}
	at(t, again, 61_500, Transaction{AccountID: 7, Amount: 600})
	if got := alerts(again); len(got) != 0 {
		t.Fatalf("alerts after the restored timer fired = %v, want none", got)
	}
}

// TestThePipelineRaisesTheWalkthroughsAlert runs the whole job on the
// sample transactions with an in-memory sink. It relies on the run
// taking less than the detector's minute of processing time.
func TestThePipelineRaisesTheWalkthroughsAlert(t *testing.T) {
	sink := collection.NewSink[Alert]()
	p := pipeline(transactions, func(alerts weir.Stream[Alert]) { weir.To(alerts, "alerts", sink) })
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := sink.Records(), []Alert{{AccountID: 3}}; !slices.Equal(got, want) {
		t.Fatalf("alerts = %v, want %v", got, want)
	}
}
