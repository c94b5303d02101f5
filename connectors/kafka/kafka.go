// Package kafka is weir's Apache Kafka connector, built on franz-go.
//
// Source reads topics: their partitions are split across the source's
// subtasks, and each subtask's Position holds the next offset of every
// partition it owns, so the job's checkpoints, not the consumer group, are
// the source of truth for where to resume. It reads with read_committed
// isolation by default, discovers partitions created while it runs, and can
// track event time per partition (see Reader's connector.EventTimer
// ability).
//
// Sink writes to a topic, exactly-once by Kafka transactions tied to
// checkpoints (two-phase commit, connector.Committer) or at-least-once with
// the idempotent producer.
//
// Record values are encoded and decoded by a format.Format (JSON, Avro).
// Options are checked when the source or sink is created and, against the
// brokers, when it opens, so a bad option fails the job at start with an
// error saying which option and why. See docs/connectors/kafka.md.
package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ErrUnreachable is wrapped by the error of an Open that could not reach
// any broker within its connect timeout.
var ErrUnreachable = errors.New("kafka brokers unreachable")

// ErrOption is wrapped by the errors of Source and Sink for a bad option.
var ErrOption = errors.New("invalid kafka option")

// Header is a Kafka record header.
type Header struct {
	Key   string
	Value []byte
}

// defaultConnectTimeout bounds how long Open waits for the brokers.
const defaultConnectTimeout = 30 * time.Second

func optionErr(kind, format string, args ...any) error {
	return fmt.Errorf("kafka %s: %w: %s", kind, ErrOption, fmt.Sprintf(format, args...))
}

// ping waits until a broker answers a metadata request about topics, with
// the client's retries and backoff, for at most timeout. It fails with
// ErrUnreachable if none answers, and with a plain error if a topic does
// not exist.
func ping(ctx context.Context, cl *kgo.Client, kind string, brokers []string, timeout time.Duration, topics ...string) (map[string]int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var lastErr error
	start := time.Now()
	backoff := 50 * time.Millisecond
	for {
		parts, err := topicPartitions(ctx, cl, topics)
		if err == nil {
			return parts, nil
		}
		if errors.Is(err, errNoTopic) && time.Since(start) > missingTopicGrace {
			return nil, fmt.Errorf("kafka %s: %w", kind, err)
		}
		lastErr = err
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			if errors.Is(lastErr, errNoTopic) {
				return nil, fmt.Errorf("kafka %s: %w", kind, lastErr)
			}
			if ctx.Err() == context.DeadlineExceeded {
				return nil, fmt.Errorf("kafka %s: %w: no answer from %s within %v (retried with backoff): %v",
					kind, ErrUnreachable, strings.Join(brokers, ","), timeout, lastErr)
			}
			return nil, fmt.Errorf("kafka %s: %w", kind, ctx.Err())
		case <-t.C:
		}
		backoff = min(2*backoff, time.Second)
	}
}

var errNoTopic = errors.New("topic does not exist")

// missingTopicGrace is how long ping waits for a missing topic to appear:
// a topic created just before the job starts may take a moment to show in
// every broker's metadata.
const missingTopicGrace = 3 * time.Second

// topicPartitions returns the number of partitions of each topic.
func topicPartitions(ctx context.Context, cl *kgo.Client, topics []string) (map[string]int, error) {
	md, err := kadm.NewClient(cl).Metadata(ctx, topics...)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(topics))
	for _, t := range topics {
		td, ok := md.Topics[t]
		if !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
			return nil, fmt.Errorf("%w: %q", errNoTopic, t)
		}
		if td.Err != nil {
			return nil, fmt.Errorf("metadata of topic %q: %w", t, td.Err)
		}
		out[t] = len(td.Partitions)
	}
	return out, nil
}

// clientOpts are the options every client of the connector starts with.
// The user's options come last, so they win.
func clientOpts(brokers []string, user []kgo.Opt, more ...kgo.Opt) []kgo.Opt {
	o := append([]kgo.Opt{kgo.SeedBrokers(brokers...), kgo.DialTimeout(5 * time.Second),
		kgo.RetryBackoffFn(func(tries int) time.Duration {
			return min(time.Duration(1<<min(tries, 10))*10*time.Millisecond, time.Second)
		})}, more...)
	return append(o, user...)
}
