package hybrid_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/file"
	"github.com/weir-stream/weir/connectors/format"
	"github.com/weir-stream/weir/connectors/hybrid"
	"github.com/weir-stream/weir/connectors/kafka"
	"github.com/weir-stream/weir/internal/testenv"
	"github.com/weir-stream/weir/weirtest"
)

type event struct {
	Key  int64 `json:"key"`
	Time int64 `json:"time"`
}

const (
	historyEnd = 4000 // the history holds event times [0, historyEnd)
	liveEnd    = 8000 // the topic holds [historyEnd-1000, liveEnd)
)

// historyAndTopic writes the history of events, one per millisecond, to a
// JSON-lines file and the live events to a new topic of 3 partitions,
// each record stamped with its event time. The topic also holds the last
// second of the history, as a topic retained longer than the history's
// cut-off does: the switch must start after it.
func historyAndTopic(t *testing.T) (path, topic string, brokers []string) {
	brokers = strings.Split(testenv.Require(t, "WEIR_KAFKA_BROKERS"), ",")
	var b strings.Builder
	for i := range int64(historyEnd) {
		line, _ := json.Marshal(event{Key: i % 7, Time: i})
		b.Write(line)
		b.WriteByte('\n')
	}
	path = filepath.Join(t.TempDir(), "history.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o666); err != nil {
		t.Fatal(err)
	}
	// A topic's deletion ends after the test, so each run (-count) names
	// its own.
	topic = fmt.Sprintf("weir-hybrid-%d-%d-%s", os.Getpid(), time.Now().UnixNano(), strings.ReplaceAll(t.Name(), "/", "-"))
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm := kadm.NewClient(cl)
	// The records carry event times of 1970 as their timestamps, which
	// the test broker keeps (scripts/services/kafka.sh turns retention off).
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { adm.DeleteTopics(context.Background(), topic) })
	var recs []*kgo.Record
	for i := int64(historyEnd - 1000); i < liveEnd; i++ {
		v, _ := json.Marshal(event{Key: i % 7, Time: i})
		recs = append(recs, &kgo.Record{Value: v, Partition: int32(i % 3), Timestamp: time.UnixMilli(i)})
	}
	for {
		err := cl.ProduceSync(ctx, recs...).FirstErr()
		if err == nil {
			break
		}
		if ctx.Err() != nil { // a fresh topic's leaders may take a moment
			t.Fatalf("producing to %s: %v", topic, err)
		}
	}
	return path, topic, brokers
}

type counter struct{}

func (counter) Create() int            { return 0 }
func (counter) Add(n int, _ event) int { return n + 1 }
func (counter) Merge(a, b int) int     { return a + b }
func (counter) Result(n int) int       { return n }

// job counts events per key in 500 ms windows of event time, reading the
// history and then the topic from where the history ends.
func job(path, topic string, brokers []string) weirtest.Job[weir.Windowed[int64, int]] {
	return func(p *weir.Pipeline, sink connector.Sink[weir.Windowed[int64, int]]) {
		src := hybrid.New(file.JSONLines[event](file.JSONOptions{}, path),
			func(_ context.Context, end hybrid.End) (connector.Source[event], error) {
				live, err := kafka.Source(kafka.SourceOptions[event]{Brokers: brokers, Topics: []string{topic},
					Format: format.JSON[event](), Bounded: true,
					Start: kafka.StartTimestamp, StartTime: time.UnixMilli(historyEnd)})
				// Slowed down, the live part lasts long enough for
				// failures to land in it too.
				return connector.Throttle(live, 10_000), err
			})
		in := weir.FromSource(p, "history-then-live", src, weir.WithTimestamps(func(e event) int64 { return e.Time }, 100*time.Millisecond))
		counts := weir.AggregateWindow(weir.WindowBy(weir.KeyBy(in, func(e event) int64 { return e.Key }), weir.Tumbling(500*time.Millisecond)), counter{})
		weir.To(counts, "counts", sink)
	}
}

// Files then a Kafka topic, exactly-once under failures injected at
// random and at named points of the checkpoint protocol, give the
// failure-free run's windows; that run counts every event once, none of
// the topic's copy of the history's last second.
func TestOracleHistoryThenKafka(t *testing.T) {
	path, topic, brokers := historyAndTopic(t)
	j := job(path, topic, brokers)

	ref := weirtest.NewSink[weir.Windowed[int64, int]]()
	p := weir.NewPipeline(weir.WithParallelism(2))
	j(p, ref)
	if err := p.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	total, windows := 0, map[int64]int{}
	for _, w := range ref.Values() {
		total += w.Value
		windows[w.Window.Start] += w.Value
	}
	if total != liveEnd || len(windows) != liveEnd/500 {
		t.Fatalf("the failure-free run counted %d events in %d windows, want %d in %d", total, len(windows), liveEnd, liveEnd/500)
	}
	for start, n := range windows {
		if n != 500 {
			t.Errorf("window at %d counted %d events, want 500", start, n)
		}
	}

	res := weirtest.Check(t, j, weirtest.Options[weir.Windowed[int64, int]]{
		Guarantee: weir.ExactlyOnce, Parallelism: 2, Seeds: []uint64{1, 2, 3, 4, 5, 6},
		Checkpoints: weir.CheckpointConfig{Interval: 10 * time.Millisecond}})
	if res.Injected == 0 || res.Recoveries == 0 {
		t.Errorf("no failure was injected or recovered from: %+v", res)
	}
	t.Logf("%+v", res)
}
