package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connector/connectortest"
	"github.com/weir-stream/weir/connectors/format"
)

func stringSink(t *testing.T, topic string, d Delivery) connector.Sink[string] {
	s, err := Sink(SinkOptions[string]{Brokers: brokers(t), Topic: topic, Format: format.JSON[string](),
		Delivery: d, Key: func(v string) []byte { return []byte(v) }, TransactionTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func decodeAll(t testing.TB, vals []string) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		if err := format.JSON[string]().Decode([]byte(v), &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestSinkConformance(t *testing.T) {
	recs := make([]string, 300)
	for i := range recs {
		recs[i] = fmt.Sprintf("r%03d", i)
	}
	for _, d := range []Delivery{ExactlyOnce, AtLeastOnce} {
		t.Run(d.String(), func(t *testing.T) {
			topics := map[connector.Sink[string]]string{}
			connectortest.TestSink(t, connectortest.SinkCase[string]{
				New: func(t *testing.T) connector.Sink[string] {
					topic := newTopic(t, 3)
					s := stringSink(t, topic, d)
					topics[s] = topic
					return s
				},
				ReadBack: func(t *testing.T, s connector.Sink[string]) []string {
					settled(t, topics[s])
					return decodeAll(t, values(committed(t, topics[s])))
				},
			})
		})
	}
}

// crash drops a writer as a killed process would: its clients go away
// without ending their transactions.
func crash(w *txnWriter[string]) {
	if w.cur != nil {
		w.cur.cl.Close()
	}
	for _, t := range w.pending {
		t.cl.Close()
	}
	w.admin.Close()
}

func open(t *testing.T, s connector.Sink[string], subtask int) *txnWriter[string] {
	t.Helper()
	w, err := s.Open(t.Context(), connector.SubtaskInfo{Operator: "sink", Subtask: subtask, Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	return w.(*txnWriter[string])
}

func TestRecoverCommitsAPreCommittedTransactionOfACrashedWriterAndAbortsTheRest(t *testing.T) {
	topic := newTopic(t, 2)
	s := stringSink(t, topic, ExactlyOnce)
	ctx := t.Context()

	w := open(t, s, 1)
	if err := w.Recover(ctx, 0, nil); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, w, "a", "b")
	txn1, err := w.PreCommit(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, w, "c")
	txn2, err := w.PreCommit(ctx, 2) // checkpoint 2 never completes
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, w, "d") // after the last barrier
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	crash(w)
	if got := values(committed(t, topic)); len(got) != 0 {
		t.Fatalf("before any commit a read_committed consumer sees %q", got)
	}

	// Checkpoint 1 completed before the crash, but its commit was lost.
	for attempt := range 2 { // the second restore finds txn1 committed
		w := open(t, s, 1)
		if err := w.Recover(ctx, 1, [][]byte{txn1}); err != nil {
			t.Fatalf("attempt %d: %v", attempt, err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		settled(t, topic)
		got := decodeAll(t, values(committed(t, topic)))
		slices.Sort(got)
		if want := []string{"a", "b"}; !slices.Equal(got, want) {
			t.Fatalf("attempt %d: after restoring checkpoint 1 a read_committed consumer sees %q, want %q", attempt, got, want)
		}
	}
	// Committing checkpoint 1's transaction again through Commit is fine
	// too, and checkpoint 2's transaction was aborted: it cannot commit.
	w = open(t, s, 1)
	defer w.Close()
	if err := w.Commit(ctx, txn1); err != nil {
		t.Errorf("committing again: %v", err)
	}
	if err := w.Commit(ctx, txn2); err == nil || !strings.Contains(err.Error(), "lost") {
		t.Errorf("committing an aborted transaction: got %v, want an error saying its records are lost", err)
	}
}

func mustWrite(t *testing.T, w connector.Writer[string], vs ...string) {
	t.Helper()
	if err := w.Write(t.Context(), vs); err != nil {
		t.Fatal(err)
	}
}

func TestTransactionTimeoutAboveTheBrokersMaximumFailsOpen(t *testing.T) {
	topic := newTopic(t, 1)
	s, err := Sink(SinkOptions[string]{Brokers: brokers(t), Topic: topic, Format: format.JSON[string](),
		TransactionTimeout: 10 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Open(t.Context(), connector.SubtaskInfo{Operator: "sink", Parallelism: 1})
	if !errors.Is(err, ErrOption) || !strings.Contains(err.Error(), "transaction.max.timeout.ms") {
		t.Errorf("got %v, want an ErrOption naming transaction.max.timeout.ms", err)
	}
}

func TestSinkOptionsAreChecked(t *testing.T) {
	js := format.JSON[string]()
	cases := map[string]SinkOptions[string]{
		"Brokers is empty":    {Topic: "t", Format: js},
		"Topic is empty":      {Brokers: []string{"x"}, Format: js},
		"Format is nil":       {Brokers: []string{"x"}, Topic: "t"},
		"needs Partition":     {Brokers: []string{"x"}, Topic: "t", Format: js, Partitioner: ManualPartitioner},
		`unknown Partitioner`: {Brokers: []string{"x"}, Topic: "t", Format: js, Partitioner: "random"},
		"below one second":    {Brokers: []string{"x"}, Topic: "t", Format: js, TransactionTimeout: time.Millisecond},
	}
	for want, o := range cases {
		if _, err := Sink(o); !errors.Is(err, ErrOption) || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want ErrOption saying %q", err, want)
		}
	}
}

func TestUnreachableBrokerFailsOpenClearly(t *testing.T) {
	for _, d := range []Delivery{ExactlyOnce, AtLeastOnce} {
		s, err := Sink(SinkOptions[string]{Brokers: []string{"127.0.0.1:1"}, Topic: "t", Format: format.JSON[string](),
			Delivery: d, ConnectTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Open(context.Background(), connector.SubtaskInfo{Operator: "sink", Parallelism: 1})
		if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "127.0.0.1:1") {
			t.Errorf("%v: got %v, want ErrUnreachable naming the broker", d, err)
		}
	}
}

func TestSinkWritesKeysHeadersAndChosenPartitions(t *testing.T) {
	topic := newTopic(t, 3)
	s, err := Sink(SinkOptions[string]{Brokers: brokers(t), Topic: topic, Format: format.JSON[string](),
		Key:         func(v string) []byte { return []byte("k-" + v) },
		Headers:     func(v string) []Header { return []Header{{Key: "len", Value: []byte(fmt.Sprint(len(v)))}} },
		Partitioner: ManualPartitioner, Partition: func(v string) int32 { return int32(len(v) % 3) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := connectortest.WriteAll(t.Context(), s, []string{"a", "bb", "ccc", "dddd"}, 1); err != nil {
		t.Fatal(err)
	}
	settled(t, topic)
	var got []string
	for p, recs := range committed(t, topic) {
		for _, r := range recs {
			got = append(got, fmt.Sprintf("%d %s %s %s=%s", p, r.Key, r.Value, r.Headers[0].Key, r.Headers[0].Value))
		}
	}
	slices.Sort(got)
	want := []string{`0 k-ccc "ccc" len=3`, `1 k-a "a" len=1`, `1 k-dddd "dddd" len=4`, `2 k-bb "bb" len=2`}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
