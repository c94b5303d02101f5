package jobs

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/connectors/format"
	"github.com/weir-stream/weir/internal/testenv"
)

// Kafka -> weir -> Kafka benchmarks of the kafka-q1 job, run in-process
// against the test broker (scripts/services/kafka.sh). See the Kafka
// section of docs/benchmarks.md for how to run them and their figures.

// kafkaJob builds the named job with the given flags into a pipeline.
func kafkaJob(b *testing.B, name string, opts []weir.Option, args ...string) *weir.Pipeline {
	b.Helper()
	j, ok := cli.LookupJob(name)
	if !ok {
		b.Fatalf("no job %s", name)
	}
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	build := j.Flags(fs)
	if err := fs.Parse(args); err != nil {
		b.Fatal(err)
	}
	p := weir.NewPipeline(opts...)
	if err := build(p, cli.JobConfig{}); err != nil {
		b.Fatal(err)
	}
	return p
}

func benchTopics(b *testing.B, brokers string, names ...string) []string {
	b.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	var out []string
	for _, n := range names {
		name := fmt.Sprintf("weir-bench-%d-%d-%s", os.Getpid(), time.Now().UnixNano(), n)
		resp, err := adm.CreateTopic(context.Background(), 2, 1, nil, name)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, name)
	}
	b.Cleanup(func() { adm.DeleteTopics(context.Background(), out...) })
	return out
}

func guaranteeFor(delivery string) weir.Guarantee {
	if delivery == "exactly-once" {
		return weir.ExactlyOnce
	}
	return weir.AtLeastOnce
}

// BenchmarkKafkaQ1Throughput runs kafka-q1 over a topic of 200,000
// Nexmark bids (bounded, parallelism 2, checkpoints every second) and
// reports records per second, exactly-once against at-least-once.
func BenchmarkKafkaQ1Throughput(b *testing.B) {
	brokers := testenv.Require(b, "WEIR_KAFKA_BROKERS")
	const events = 217_392 // 200,000 bids: 46 of every 50 events are bids
	in := benchTopics(b, brokers, "bids")[0]
	p := kafkaJob(b, "nexmark-to-kafka", []weir.Option{weir.WithParallelism(2)},
		"--brokers", brokers, "--sink-topic", in, "--events", fmt.Sprint(events), "--delivery", "at-least-once")
	if err := p.Run(context.Background()); err != nil {
		b.Fatal(err)
	}
	for _, delivery := range []string{"exactly-once", "at-least-once"} {
		b.Run(delivery, func(b *testing.B) {
			for b.Loop() {
				out := benchTopics(b, brokers, "out")[0]
				p := kafkaJob(b, "kafka-q1", []weir.Option{weir.WithParallelism(2), weir.WithGuarantee(guaranteeFor(delivery)),
					weir.WithCheckpoints(weir.CheckpointConfig{Interval: time.Second})},
					"--brokers", brokers, "--source-topic", in, "--sink-topic", out, "--bounded", "--delivery", delivery)
				start := time.Now()
				if err := p.Run(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(200_000/time.Since(start).Seconds(), "records/s")
			}
		})
	}
}

// BenchmarkKafkaQ1Latency writes bids at a fixed rate (2,000 per second
// for 15 s, each stamped with the wall-clock time it was produced) into
// the input topic while kafka-q1 runs, and reports the end-to-end latency
// a read_committed consumer of the output topic observes: p50 and p99 in
// milliseconds. Checkpoints are every second; exactly-once output becomes
// visible only when its checkpoint completes.
func BenchmarkKafkaQ1Latency(b *testing.B) {
	brokers := testenv.Require(b, "WEIR_KAFKA_BROKERS")
	for _, delivery := range []string{"exactly-once", "at-least-once"} {
		b.Run(delivery, func(b *testing.B) {
			for b.Loop() {
				p50, p99 := measureLatency(b, brokers, delivery, 2000, 15*time.Second)
				b.ReportMetric(p50, "p50-ms")
				b.ReportMetric(p99, "p99-ms")
			}
		})
	}
}

func measureLatency(b *testing.B, brokers, delivery string, rate int, d time.Duration) (p50, p99 float64) {
	topics := benchTopics(b, brokers, "in", "out")
	seeds := strings.Split(brokers, ",")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := kafkaJob(b, "kafka-q1", []weir.Option{weir.WithParallelism(2), weir.WithGuarantee(guaranteeFor(delivery)),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: time.Second})},
		"--brokers", brokers, "--source-topic", topics[0], "--sink-topic", topics[1], "--delivery", delivery, "--start", "earliest")
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		if err := p.Run(ctx); err != nil && ctx.Err() == nil {
			b.Error(err)
		}
	})

	consumer, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topics[1]),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(10*time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	defer consumer.Close()
	producer, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topics[0]), kgo.ProducerLinger(0))
	if err != nil {
		b.Fatal(err)
	}
	defer producer.Close()

	total := int(d.Seconds()) * rate
	wg.Go(func() {
		f := format.JSON[KafkaBid]()
		tick := time.NewTicker(time.Second / 100)
		defer tick.Stop()
		for i := 0; i < total && ctx.Err() == nil; {
			<-tick.C
			for range rate / 100 {
				v, _ := f.Encode(KafkaBid{Auction: int64(i), Price: 100, DateTime: time.Now().UnixMilli()})
				producer.Produce(ctx, &kgo.Record{Value: v}, nil)
				i++
			}
		}
	})
	var lat []float64 // of the records after the first second (start-up)
	seen := 0
	f := format.JSON[KafkaBid]()
	deadline := time.Now().Add(d + 30*time.Second)
	for seen < total && time.Now().Before(deadline) {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		fs := consumer.PollFetches(pctx)
		pcancel()
		now := time.Now().UnixMilli()
		fs.EachRecord(func(r *kgo.Record) {
			var v KafkaBid
			if err := f.Decode(r.Value, &v); err != nil {
				b.Error(err)
				return
			}
			seen++
			if v.Auction >= int64(rate) {
				lat = append(lat, float64(now-v.DateTime))
			}
		})
	}
	cancel()
	if seen < total {
		b.Fatalf("%s: the consumer saw %d of %d records", delivery, seen, total)
	}
	kept := lat
	slices.Sort(kept)
	return kept[len(kept)/2], kept[len(kept)*99/100]
}
