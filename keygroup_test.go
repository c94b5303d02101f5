package weir_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/weirtest"
)

// unstableKeys builds a job whose key selector returns another key at
// every call: the sender routes a record by one key, and the keyed
// window that receives it computes another, of another subtask's key
// groups as often as not.
func unstableKeys(p *weir.Pipeline) {
	var calls atomic.Int64
	src := generator.New(2_000, func(i int64) tick { return tick{Key: i % 40, Time: i} })
	s := weir.FromSource(p, "ticks", src, weir.WithTimestamps(func(t tick) int64 { return t.Time }, 0))
	k := weir.KeyBy(s, func(t tick) int64 { return t.Key + calls.Add(1) })
	w := weir.WindowBy(k, weir.Tumbling(500*time.Millisecond))
	weir.To(weir.AggregateWindow(w, countTicks{}, weir.Name("count")), "sink", weirtest.NewSink[tickCount]())
}

// A record whose key belongs to a key group the receiving subtask does
// not own fails the task with an error that names the key group, the
// subtask's range and the channel the record came on, rather than an
// index out of range in its state.
func TestKeyedOperatorRefusesAKeyGroupItDoesNotOwn(t *testing.T) {
	p := weir.NewPipeline(weir.WithParallelism(2))
	unstableKeys(p)
	err := p.Run(context.Background())
	if err == nil {
		t.Fatal("the job succeeded; want a record refused by its key group")
	}
	msg := err.Error()
	for _, want := range []string{`task "count -> sink"`, "a record of key group", "reached the subtask that owns key groups [", `of "ticks" (input channel`} {
		if !strings.Contains(msg, want) {
			t.Fatalf("error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "index out of range") {
		t.Fatalf("error %q is a panic in the state", msg)
	}
}

// Under fine-grained failover such a record does not restart the subtask
// alone, where a sender's retained output would hand it the same record
// again: the job rolls back globally.
func TestRecordOfAnotherKeyGroupRollsBackGlobally(t *testing.T) {
	logs := &waitLog{}
	p := weir.NewPipeline(weir.WithParallelism(2), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithFailover(weir.FineGrainedFailover), weir.WithLog(logs.add),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 20 * time.Millisecond}),
		weir.WithRestartStrategy("fixed-delay", 2, time.Millisecond, 0, 0))
	unstableKeys(p)
	if err := p.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "a record of key group") {
		t.Fatalf("got %v, want the job to fail on the key group once the restarts are spent", err)
	}
	rep := p.Report()
	if len(rep.Recoveries) == 0 {
		t.Fatalf("no recovery: %+v", rep)
	}
	for _, rec := range rep.Recoveries {
		if rec.Restarted != rec.Subtasks {
			t.Fatalf("recovery %+v restarted %d of %d subtasks, want all: a global rollback", rec, rec.Restarted, rec.Subtasks)
		}
	}
	if all := logs.String(); !strings.Contains(all, "falling back to a global rollback") {
		t.Fatalf("the log does not say the job rolls back globally:\n%s", all)
	}
}
