package kafka

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-stream/weir/internal/testenv"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// brokers returns the test broker's addresses (see internal/testenv).
func brokers(t testing.TB) []string {
	return strings.Split(testenv.Require(t, "WEIR_KAFKA_BROKERS"), ",")
}

var topicSeq atomic.Int64

// newTopic creates a topic with the given number of partitions, named
// after the test, and deletes it when the test ends.
func newTopic(t testing.TB, partitions int) string {
	t.Helper()
	b := brokers(t)
	name := fmt.Sprintf("weir-test-%d-%d-%s", os.Getpid(), topicSeq.Add(1),
		strings.NewReplacer("/", "-", "=", "-", " ", "-").Replace(t.Name()))
	if len(name) > 200 {
		name = name[:200]
	}
	adm := admin(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, int32(partitions), 1, nil, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("creating topic %s: %v", name, err)
	}
	// Wait until the topic's partitions have leaders, so that clients
	// opened next find it.
	pollBroker(t, ctx, "topic "+name+" has no leaders", func() (bool, error) {
		md, err := adm.Metadata(ctx, name)
		if err != nil {
			return false, err
		}
		td, ok := md.Topics[name]
		return ok && td.Err == nil && len(td.Partitions) == partitions && leaders(td), nil
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		adm.DeleteTopics(ctx, name)
	})
	return name
}

func leaders(td kadm.TopicDetail) bool {
	for _, p := range td.Partitions {
		if p.Leader < 0 || p.Err != nil {
			return false
		}
	}
	return true
}

func admin(t testing.TB, b []string) *kadm.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(b...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// produce writes values (as given) to topic, value i to partition
// i % partitions, outside any transaction.
func produce(t testing.TB, topic string, partitions int, values ...[]byte) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers(t)...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, len(values))
	for i, v := range values {
		recs[i] = &kgo.Record{Value: v, Partition: int32(i % partitions)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Partitions just added reach the brokers' metadata a little later:
	// a record for one the metadata does not list yet is refused.
	adm := kadm.NewClient(cl)
	pollBroker(t, ctx, fmt.Sprintf("topic %s does not show %d partitions", topic, partitions), func() (bool, error) {
		td, err := adm.ListTopics(ctx, topic)
		if err != nil {
			return false, err
		}
		return len(td[topic].Partitions) >= partitions, td.Error()
	})
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("producing to %s: %v", topic, err)
	}
}

// settled waits until no transaction on topic is undecided in the
// broker's view: every partition's last stable offset has reached its
// end offset. A producer's commit returns before the broker has written
// the commit markers to the partitions, so a read straight after it can
// end short of the committed records.
func settled(t testing.TB, topic string) {
	t.Helper()
	adm := admin(t, brokers(t))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pollBroker(t, ctx, "transactions on "+topic+" stay undecided", func() (bool, error) {
		stable, err := adm.ListCommittedOffsets(ctx, topic)
		if err == nil {
			err = stable.Error()
		}
		if err != nil {
			return false, err
		}
		end, err := adm.ListEndOffsets(ctx, topic)
		if err == nil {
			err = end.Error()
		}
		if err != nil {
			return false, err
		}
		open := 0
		end.Each(func(o kadm.ListedOffset) {
			if s, ok := stable.Lookup(topic, o.Partition); !ok || s.Offset != o.Offset {
				open++
			}
		})
		return open == 0, fmt.Errorf("%d partitions have undecided records", open)
	})
}

// committed reads every record of topic a read_committed consumer sees,
// up to the last stable offset of each partition at the time of the
// call, partition by partition in offset order.
func committed(t testing.TB, topic string) [][]*kgo.Record {
	t.Helper()
	b := brokers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ends, err := admin(t, b).ListCommittedOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatalf("listing offsets of %s: %v", topic, err)
	}
	parts := map[int32]kgo.Offset{}
	want := map[int32]int64{}
	n := 0
	ends.Each(func(o kadm.ListedOffset) {
		n = max(n, int(o.Partition)+1)
		if o.Offset > 0 {
			parts[o.Partition] = kgo.NewOffset().AtStart()
			want[o.Partition] = o.Offset
		}
	})
	out := make([][]*kgo.Record, n)
	if len(parts) == 0 {
		return out
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b...), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s back: partitions %v not read to their end", topic, want)
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("reading %s/%d back: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			if !r.Attrs.IsControl() {
				out[r.Partition] = append(out[r.Partition], r)
			}
			if end, ok := want[r.Partition]; ok && r.Offset+1 >= end {
				delete(want, r.Partition)
			}
		})
	}
	return out
}

// values returns the values of records as strings.
func values(recs [][]*kgo.Record) []string {
	var out []string
	for _, p := range recs {
		for _, r := range p {
			out = append(out, string(r.Value))
		}
	}
	return out
}

// pollBroker asks the broker done until it says yes, and fails t with
// what and the last error if ctx ends first. The broker changes state on
// its own schedule and tells no one, so asking again is the only way to
// wait for it.
func pollBroker(t testing.TB, ctx context.Context, what string, done func() (bool, error)) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := done()
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what, err)
		case <-tick.C:
		}
	}
}
