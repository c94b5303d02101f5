// Package nats is weir's NATS JetStream connector: a replayable source and
// an exactly-once sink, built on nats.go's jetstream package. Records are
// message payloads in a format of package connectors/format (JSON, Avro).
//
// The source reads one stream. Its subjects are split into partitions (by
// default the stream's configured subjects, or Options.Partitions): subtask
// i of n reads partitions i, i+n, i+2n, ... through one ephemeral pull
// consumer filtered to those subjects, in stream-sequence order. Its
// Position is the next stream sequence, so a restore re-creates the
// consumer there and replays exactly what followed the checkpoint. The
// positions move to another parallelism partition by partition (Rescale,
// rescale.go).
//
// The sink publishes to a subject. With checkpoints it commits with them
// (connector.Committer): the encoded messages of a checkpoint interval are
// kept in the writer and returned by PreCommit as the transaction, which
// the engine stores in the checkpoint (durable, not yet published).
// Commit publishes them with Nats-Msg-Id headers derived from (job,
// subtask, checkpoint, index), waits for every acknowledgement, and then
// records the checkpoint as committed for the subtask in a key-value
// bucket. A repeated Commit of a recorded checkpoint does nothing; one
// interrupted half-way publishes again and the stream's duplicate window
// drops the messages it already has. See docs/connectors/nats.md for the
// window's limits.
package nats

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	nc "github.com/nats-io/nats.go"
)

// ConnOptions say how to reach the server; the source and the sink share
// them.
type ConnOptions struct {
	// URL is the server URL, e.g. nats://127.0.0.1:4222 (several may be
	// given, comma-separated).
	URL string
	// ConnectTimeout bounds how long Open retries an unreachable server
	// (with exponential backoff from 100ms to 5s) before it fails; the
	// default is 30s.
	ConnectTimeout time.Duration
	// OnRetry, if set, is called before each retry of a failed connection
	// attempt, with the attempt number, its error and the wait.
	OnRetry func(attempt int, err error, wait time.Duration)
	// Options are extra nats.go options (credentials, TLS, ...).
	Options []nc.Option
}

// connect connects, retrying with exponential backoff (100ms doubling to
// 5s) for at most ConnectTimeout while the server cannot be reached.
func (o ConnOptions) connect(ctx context.Context, name string) (*nc.Conn, error) {
	if o.URL == "" {
		return nil, errors.New("nats: a server URL is required")
	}
	timeout := o.ConnectTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	deadline := time.Now().Add(timeout)
	wait := 100 * time.Millisecond
	opts := append([]nc.Option{nc.Name(name), nc.Timeout(2 * time.Second)}, o.Options...)
	for attempt := 1; ; attempt++ {
		conn, err := nc.Connect(o.URL, opts...)
		if err == nil {
			return conn, nil
		}
		if errors.Is(err, nc.ErrAuthorization) || errors.Is(err, nc.ErrAuthExpired) {
			return nil, fmt.Errorf("nats: connecting to %s: %w", redact(o.URL), err)
		}
		if time.Now().Add(wait).After(deadline) {
			return nil, fmt.Errorf("nats: cannot reach %s after %d attempts over %v: %w", redact(o.URL), attempt, timeout, err)
		}
		if o.OnRetry != nil {
			o.OnRetry(attempt, err, wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("nats: connecting to %s: %w", redact(o.URL), ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// redact returns the server URL without user information, for errors.
func redact(urls string) string {
	var out []string
	for _, u := range strings.Split(urls, ",") {
		if p, err := url.Parse(strings.TrimSpace(u)); err == nil && p.User != nil {
			p.User = nil
			u = p.String()
		}
		out = append(out, u)
	}
	return strings.Join(out, ",")
}
