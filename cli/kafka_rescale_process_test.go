package cli_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A Kafka-to-Kafka job killed with SIGKILL at parallelism 2 restores at
// parallelism 3, is killed again, and restores at parallelism 1: the
// source's partition offsets move twice (connector.Rescaler), and so do
// the sink's transactions, each old subtask's to one new subtask, which
// commits those of the restored checkpoint and aborts what the old
// subtask left open. A read_committed consumer must then see exactly the
// output of a failure-free run, and see it at once: a transaction left
// open would hold back the partitions' last stable offset until its
// timeout, hiding everything written after it.
func TestKafkaJobRescaledAcrossSIGKILLsIsExactlyOnce(t *testing.T) {
	b := kafkaBrokers(t)
	topics := kafkaTopics(t, "bids", "ref", "out")
	mustRun(t, "run", "nexmark-to-kafka", "--events", "100000", "--brokers", b, "--sink-topic", topics[0],
		"--progress", "off", "--guarantee", "exactly-once", "--checkpoint-interval", "200ms")
	settled(t, topics[0]) // the bounded reads below all end at its end
	q1 := []string{"run", "kafka-q1", "--brokers", b, "--source-topic", topics[0], "--bounded", "-p", "2",
		"--progress", "off", "--guarantee", "exactly-once"}
	mustRun(t, append(q1, "--sink-topic", topics[1])...)
	want := readCommitted(t, topics[1])
	if len(want) < 80000 {
		t.Fatalf("the reference run wrote %d bids, want about 92%% of 100000", len(want))
	}

	// Killed as their fifth checkpoint is triggered, the runs die while
	// writing: each sink subtask usually leaves a transaction open after
	// the checkpoint the next run restores (unless that fifth checkpoint
	// completes before the kill lands;
	// TestRecoverAtALowerParallelismAbortsWhatEveryOldSubtaskLeftOpen in
	// connectors/kafka covers this without the race).
	ft := slices.Concat(q1, []string{"--sink-topic", topics[2], "--checkpoint-interval", "30ms", "--state-dir", t.TempDir()})
	killed := slices.Concat(ft, []string{"--log-checkpoints"})
	killAtFifthCheckpoint := func(args ...string) {
		t.Helper()
		if !killAfterCount(t, " triggered", 5, args...) {
			t.Fatal("the job ended before its fifth checkpoint, before it could be killed")
		}
	}
	killAtFifthCheckpoint(killed...)
	killAtFifthCheckpoint(append(withParallelism(killed, 3), "--restore", "latest")...)
	res := mustRun(t, append(withParallelism(ft, 1), "--restore", "latest")...)
	if moved := "with parallelism 3, this run has 1"; !strings.Contains(res, moved) {
		t.Fatalf("the last restore did not move the job from parallelism 3 (no %q):\n%s", moved, res)
	}
	if d := diffCount(readCommitted(t, topics[2]), want); d != "" {
		t.Fatalf("restored at parallelism 3 and then 1, a read_committed consumer does not see the failure-free output: %s\n%s", d, res)
	}
}

// settled waits until no transaction on topic is open or undecided: every
// partition's last stable offset has reached its end offset. A
// producer's commit returns before the broker has written the commit
// markers, and a transaction left open holds the last stable offset back
// until it times out. The broker tells no one when that changes, so the
// test asks again until it has or a minute passed.
func settled(t *testing.T, topic string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(kafkaBrokers(t), ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		open, err := undecided(ctx, adm, topic)
		if err == nil && open == 0 {
			return
		}
		if err == nil {
			err = fmt.Errorf("%d partitions have open or undecided transactions", open)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("transactions on %s stay open: %v", topic, err)
		case <-tick.C:
		}
	}
}

// undecided returns how many of topic's partitions have a last stable
// offset short of their end.
func undecided(ctx context.Context, adm *kadm.Client, topic string) (int, error) {
	stable, err := adm.ListCommittedOffsets(ctx, topic)
	if err == nil {
		err = stable.Error()
	}
	if err != nil {
		return 0, err
	}
	end, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = end.Error()
	}
	if err != nil {
		return 0, err
	}
	open := 0
	end.Each(func(o kadm.ListedOffset) {
		if s, ok := stable.Lookup(topic, o.Partition); !ok || s.Offset != o.Offset {
			open++
		}
	})
	return open, nil
}
