package cli_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-stream/weir/internal/testenv"
)

// The Kafka jobs (nexmark-to-kafka, kafka-q1) run as real processes
// against the real broker, are killed with SIGKILL or get injected
// failures, and a read_committed consumer must see exactly the output of a
// failure-free run.

// kafkaBrokers returns the test broker's address. The tests run a
// separately built weir binary, so -race -short adds nothing to them.
func kafkaBrokers(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a separately built weir binary; -race -short adds nothing to it")
	}
	return testenv.Require(t, "WEIR_KAFKA_BROKERS")
}

// kafkaTopics creates topics with 3 partitions, named after the test.
func kafkaTopics(t *testing.T, names ...string) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(kafkaBrokers(t), ",")...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []string
	for _, n := range names {
		name := fmt.Sprintf("weir-cli-%d-%s-%s", os.Getpid(), t.Name(), n)
		resp, err := adm.CreateTopic(ctx, 3, 1, nil, name)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			t.Fatalf("creating topic %s: %v", name, err)
		}
		out = append(out, name)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		adm.DeleteTopics(ctx, out...)
	})
	return out
}

// readCommitted returns the values a read_committed consumer sees in
// topic once every transaction on it is decided (see settled), sorted.
func readCommitted(t *testing.T, topic string) []string {
	t.Helper()
	settled(t, topic)
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(kafkaBrokers(t), ",")...),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListCommittedOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32]int64{}
	parts := map[int32]kgo.Offset{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
			parts[o.Partition] = kgo.NewOffset().AtStart()
		}
	})
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts})
	var out []string
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: partitions %v not read to the end", topic, want)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if !r.Attrs.IsControl() {
				out = append(out, string(r.Value))
			}
			if end, ok := want[r.Partition]; ok && r.Offset+1 >= end {
				delete(want, r.Partition)
			}
		})
	}
	slices.Sort(out)
	return out
}

// killAfterCheckpoints runs weir with args, waits until it logged n
// completed checkpoints, and kills it with SIGKILL.
func killAfterCheckpoints(t *testing.T, n int, args ...string) {
	t.Helper()
	if !killAfterCount(t, " completed in ", n, args...) {
		t.Fatalf("the job ended before %d checkpoints completed, before it could be killed", n)
	}
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(weirBinary(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("weir %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func diffCount(got, want []string) string {
	if slices.Equal(got, want) {
		return ""
	}
	count := map[string]int{}
	for _, w := range want {
		count[w]++
	}
	for _, g := range got {
		count[g]--
	}
	missing, extra := 0, 0
	for _, c := range count {
		if c > 0 {
			missing += c
		} else {
			extra -= c
		}
	}
	return fmt.Sprintf("got %d records, want %d: %d missing, %d extra (duplicates or foreign)", len(got), len(want), missing, extra)
}

func TestKafkaSinkIsExactlyOnceAcrossSIGKILLAndRestore(t *testing.T) {
	b := kafkaBrokers(t)
	topics := kafkaTopics(t, "ref", "out")
	job := []string{"run", "nexmark-to-kafka", "--events", "60000", "--brokers", b, "-p", "2", "--progress", "off",
		"--guarantee", "exactly-once"}
	mustRun(t, append(job, "--sink-topic", topics[0], "--checkpoint-interval", "200ms")...)
	want := readCommitted(t, topics[0])
	if len(want) < 50000 {
		t.Fatalf("the reference run wrote %d bids, want about 92%% of 60000", len(want))
	}

	state := t.TempDir()
	ft := append(job, "--sink-topic", topics[1], "--checkpoint-interval", "50ms", "--state-dir", state,
		"--rate", "20000", "--log-checkpoints")
	killAfterCheckpoints(t, 3, ft...)
	for range 2 {
		killAfterCheckpoints(t, 3, append(ft, "--restore", "latest")...)
	}
	res := mustRun(t, append(ft, "--restore", "latest")...)
	if !strings.Contains(res, "restoring checkpoint") {
		t.Fatalf("no restore reported:\n%s", res)
	}
	if d := diffCount(readCommitted(t, topics[1]), want); d != "" {
		t.Fatalf("after 3 SIGKILLs and restores a read_committed consumer does not see the failure-free output: %s", d)
	}
}

func TestKafkaToKafkaNexmarkIsExactlyOnceWithInjectedFailures(t *testing.T) {
	b := kafkaBrokers(t)
	topics := kafkaTopics(t, "bids", "ref", "out")
	mustRun(t, "run", "nexmark-to-kafka", "--events", "50000", "--brokers", b, "--sink-topic", topics[0],
		"--progress", "off", "--guarantee", "exactly-once", "--checkpoint-interval", "200ms")
	settled(t, topics[0]) // the bounded reads below all end at its end
	q1 := []string{"run", "kafka-q1", "--brokers", b, "--source-topic", topics[0], "--bounded", "-p", "3",
		"--progress", "off", "--guarantee", "exactly-once"}
	mustRun(t, append(q1, "--sink-topic", topics[1])...)
	want := readCommitted(t, topics[1])
	if len(want) < 40000 {
		t.Fatalf("the reference run wrote %d bids, want about 92%% of 50000", len(want))
	}
	// Random-moment kills wait for a completed checkpoint
	// (--inject-after-checkpoint): without that they could all land before
	// the first one completes on a loaded machine, whose sinks take long
	// to start their transactions, and no recovery would restore one. Two
	// seeds, each checked for exactly-once output.
	fromCheckpoint := false
	for seed := 1; seed <= 2; seed++ {
		out := topics[2]
		if seed > 1 {
			out = kafkaTopics(t, fmt.Sprintf("out%d", seed))[0]
		}
		res := mustRun(t, append(q1, "--sink-topic", out, "--checkpoint-interval", "30ms",
			"--inject-failures", "3", "--inject-after-checkpoint", "--failure-seed", fmt.Sprint(seed))...)
		if !strings.Contains(res, "failures injected") {
			t.Fatalf("seed %d: no failure was injected; the test proves nothing:\n%s", seed, res)
		}
		fromCheckpoint = fromCheckpoint || strings.Contains(res, "restored checkpoint")
		if d := diffCount(readCommitted(t, out), want); d != "" {
			t.Fatalf("seed %d: with injected failures a read_committed consumer does not see the failure-free output: %s\n%s", seed, d, res)
		}
	}
	if !fromCheckpoint {
		t.Error("no recovery restored a checkpoint: the sink's commit of restored transactions went untested")
	}
}

func TestKafkaJobFailsOnAnUndecodableRecordOrRoutesItToADeadLetterTopic(t *testing.T) {
	b := kafkaBrokers(t)
	topics := kafkaTopics(t, "bids", "out", "dlq", "out2")
	mustRun(t, "run", "nexmark-to-kafka", "--events", "2000", "--brokers", b, "--sink-topic", topics[0],
		"--progress", "off", "--guarantee", "exactly-once")
	settled(t, topics[0])
	cl, err := kgo.NewClient(kgo.SeedBrokers(b), kgo.DefaultProduceTopic(topics[0]),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(t.Context(), &kgo.Record{Partition: 1, Value: []byte("{not a bid")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	q1 := []string{"run", "kafka-q1", "--brokers", b, "--source-topic", topics[0], "--bounded",
		"--progress", "off", "--guarantee", "exactly-once"}
	out, err := exec.Command(weirBinary(t), append(q1, "--sink-topic", topics[1], "--restart-strategy", "none")...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "topic "+topics[0]+" partition 1 offset") {
		t.Fatalf("fail policy: got %v, want the job to fail naming topic, partition and offset:\n%s", err, out)
	}
	mustRun(t, append(q1, "--sink-topic", topics[3], "--on-malformed", "skip", "--dead-letter-topic", topics[2])...)
	if dead := readCommitted(t, topics[2]); !slices.Equal(dead, []string{"{not a bid"}) {
		t.Errorf("dead-letter topic holds %q, want the bad record", dead)
	}
	if got, in := len(readCommitted(t, topics[3])), len(readCommitted(t, topics[0])); got != in-1 {
		t.Errorf("skip policy wrote %d records from %d input records, want all but the bad one", got, in)
	}
}

func TestKafkaJobWithAnUnreachableBrokerFailsClearlyAfterRetrying(t *testing.T) {
	kafkaBrokers(t)
	out, err := exec.Command(weirBinary(t), "run", "kafka-q1", "--brokers", "127.0.0.1:1", "--source-topic", "in",
		"--sink-topic", "out", "--progress", "off", "--guarantee", "exactly-once", "--connect-timeout", "1s",
		"--restart-strategy", "fixed-delay", "--restart-attempts", "1", "--restart-delay", "10ms").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "kafka brokers unreachable") || !strings.Contains(string(out), "127.0.0.1:1") {
		t.Fatalf("got %v, want a failure naming the unreachable broker:\n%s", err, out)
	}
}

func TestKafkaJobsCarryAvroRecords(t *testing.T) {
	b := kafkaBrokers(t)
	topics := kafkaTopics(t, "bids", "out")
	mustRun(t, "run", "nexmark-to-kafka", "--events", "3000", "--brokers", b, "--sink-topic", topics[0],
		"--format", "avro", "--progress", "off", "--guarantee", "exactly-once")
	settled(t, topics[0])
	mustRun(t, "run", "kafka-q1", "--brokers", b, "--source-topic", topics[0], "--sink-topic", topics[1], "--bounded",
		"--format", "avro", "--progress", "off", "--guarantee", "exactly-once")
	in, out := readCommitted(t, topics[0]), readCommitted(t, topics[1])
	if len(in) < 2500 || len(out) != len(in) {
		t.Fatalf("%d Avro bids in, %d out; want about 2,760 in and as many out", len(in), len(out))
	}
	if slices.Equal(in, out) {
		t.Error("q1 changed no price")
	}
	// Read as JSON, the Avro records are malformed: the job says so.
	res, err := exec.Command(weirBinary(t), "run", "kafka-q1", "--brokers", b, "--source-topic", topics[0],
		"--sink-topic", topics[1], "--bounded", "--progress", "off", "--restart-strategy", "none").CombinedOutput()
	if err == nil || !strings.Contains(string(res), "malformed record at topic "+topics[0]) {
		t.Errorf("reading Avro as JSON: got %v, want a malformed-record failure:\n%s", err, res)
	}
}
