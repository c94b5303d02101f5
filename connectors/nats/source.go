package nats

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	nc "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/format"
)

// SourceOptions configure a JetStream source. Stream and Format are
// required.
type SourceOptions[T any] struct {
	ConnOptions
	// Stream is the JetStream stream to read.
	Stream string
	// Partitions are the filter subjects the stream is split by; subtask i
	// of n reads partitions i, i+n, ... The default is the stream's
	// subjects. Subtasks without a partition read nothing.
	Partitions []string
	// Format decodes message payloads.
	Format format.Format[T]
	// Bounded makes the source end (io.EOF) once a subtask has read the
	// messages of its partitions that existed when it opened; otherwise it
	// waits for new messages forever.
	Bounded bool
	// OnMalformed is the policy for payloads Format cannot decode: Fail
	// (the default) stops the job with a *connector.MalformedError naming
	// the stream, sequence and subject; Skip drops the message, counts it
	// (Malformed is called) and, if DeadLetter is set, republishes it there.
	OnMalformed connector.MalformedPolicy
	// Malformed, if set, is called for every skipped message.
	Malformed func(connector.MalformedError)
	// DeadLetter is a subject (captured by some stream) that skipped
	// messages are published to, unchanged, with headers Weir-Stream,
	// Weir-Sequence, Weir-Subject and Weir-Error, and a Nats-Msg-Id so
	// that a replay does not dead-letter the same message twice within the
	// duplicate window.
	DeadLetter string
}

// Source is a JetStream source. Create it with NewSource.
type Source[T any] struct{ opts SourceOptions[T] }

// NewSource checks the options that need no server and returns the
// source. Open checks the stream.
func NewSource[T any](opts SourceOptions[T]) (*Source[T], error) {
	switch {
	case opts.URL == "":
		return nil, errors.New("nats: source needs a server URL")
	case opts.Stream == "":
		return nil, errors.New("nats: source needs a stream")
	case opts.Format == nil:
		return nil, errors.New("nats: source needs a format (connectors/format)")
	case opts.DeadLetter != "" && opts.OnMalformed != connector.Skip:
		return nil, errors.New("nats: a dead-letter subject needs the skip policy for malformed messages")
	}
	return &Source[T]{opts: opts}, nil
}

// Open connects, looks up the stream and this subtask's partitions, and
// starts a consumer at pos (the next stream sequence; nil: the first; or,
// after a rescale, where each partition starts: see rescale.go).
func (s *Source[T]) Open(ctx context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[T], error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	next, table, err := decodePosition(s.opts.Stream, pos)
	if err != nil {
		return nil, err
	}
	conn, err := s.opts.connect(ctx, fmt.Sprintf("weir %s source %d/%d", s.opts.Stream, info.Subtask, info.Parallelism))
	if err != nil {
		return nil, err
	}
	r := &reader[T]{s: s, conn: conn}
	if err := r.open(ctx, info, next, table); err != nil {
		conn.Close()
		return nil, err
	}
	return r, nil
}

type reader[T any] struct {
	s       *Source[T]
	conn    *nc.Conn
	js      jetstream.JetStream
	stream  jetstream.Stream
	filters []string
	cons    jetstream.Consumer
	it      jetstream.MessagesContext
	cur     cursor // the stream sequence of the next message to return, and the partitions' starts
	dseq    uint64 // consumer sequence of the last message received
	left    uint64 // bounded: messages left to read
	eof     bool
	pending error // a malformed-record error to return after the records before it
	skipped int64
}

func (r *reader[T]) open(ctx context.Context, info connector.SubtaskInfo, next uint64, table starts) error {
	js, err := jetstream.New(r.conn)
	if err != nil {
		return fmt.Errorf("nats: %w", err)
	}
	r.js = js
	st, err := js.Stream(ctx, r.s.opts.Stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("nats: stream %s does not exist at %s", r.s.opts.Stream, redact(r.s.opts.URL))
	}
	if err != nil {
		return fmt.Errorf("nats: looking up stream %s: %w", r.s.opts.Stream, err)
	}
	r.stream = st
	parts := r.s.opts.Partitions
	if len(parts) == 0 {
		parts = st.CachedInfo().Config.Subjects
	}
	var held []int
	for i := info.Subtask; i < len(parts); i += info.Parallelism {
		r.filters = append(r.filters, parts[i])
		held = append(held, i)
	}
	r.cur = openCursor(next, table, held)
	if len(r.filters) == 0 {
		r.eof = r.s.opts.Bounded
		return nil
	}
	return r.startConsumer(ctx)
}

// startConsumer (re)creates the subtask's ephemeral consumer at r.next.
func (r *reader[T]) startConsumer(ctx context.Context) error {
	r.stopConsumer()
	cfg := jetstream.ConsumerConfig{
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       r.cur.next,
		AckPolicy:         jetstream.AckNonePolicy,
		InactiveThreshold: time.Minute,
		MemoryStorage:     true,
		Replicas:          1,
	}
	if len(r.filters) == 1 {
		cfg.FilterSubject = r.filters[0]
	} else {
		cfg.FilterSubjects = r.filters
	}
	cons, err := r.stream.CreateConsumer(ctx, cfg)
	if err != nil {
		return fmt.Errorf("nats: stream %s: creating a consumer for subjects %s at sequence %d: %w",
			r.s.opts.Stream, strings.Join(r.filters, ", "), r.cur.next, err)
	}
	r.cons = cons
	r.dseq = 0
	if r.s.opts.Bounded {
		r.left = cons.CachedInfo().NumPending
		if r.left == 0 {
			r.eof = true
			return nil
		}
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(1024))
	if err != nil {
		return fmt.Errorf("nats: stream %s: %w", r.s.opts.Stream, err)
	}
	r.it = it
	return nil
}

func (r *reader[T]) stopConsumer() {
	if r.it != nil {
		r.it.Stop()
		r.it = nil
	}
	if r.cons != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = r.stream.DeleteConsumer(ctx, r.cons.CachedInfo().Name) // best effort; it expires anyway
		cancel()
		r.cons = nil
	}
}

// Read returns the next messages of the subtask's partitions. It waits at
// most about 10ms for the first one.
func (r *reader[T]) Read(ctx context.Context, buf []T) (int, error) {
	if r.pending != nil {
		err := r.pending
		r.pending = nil
		return 0, err
	}
	if r.eof {
		return 0, io.EOF
	}
	if r.it == nil { // an unbounded subtask without partitions
		t := time.NewTimer(10 * time.Millisecond)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-t.C:
		}
		return 0, nil
	}
	k := 0
	for k < len(buf) {
		wait := 10 * time.Millisecond
		if k > 0 {
			wait = time.Millisecond
		}
		msg, err := r.it.Next(jetstream.NextMaxWait(wait))
		if errors.Is(err, nc.ErrTimeout) {
			break
		}
		if err != nil {
			return k, fmt.Errorf("nats: reading stream %s at sequence %d: %w", r.s.opts.Stream, r.cur.next, err)
		}
		md, err := msg.Metadata()
		if err != nil {
			return k, fmt.Errorf("nats: stream %s: message without metadata: %w", r.s.opts.Stream, err)
		}
		if md.Sequence.Consumer != r.dseq+1 {
			// A message was lost on the way (e.g. a reconnect): start
			// over from the next sequence we have not returned.
			if err := r.startConsumer(ctx); err != nil {
				return k, err
			}
			if r.eof || r.it == nil {
				break
			}
			continue
		}
		r.dseq = md.Sequence.Consumer
		mine := r.cur.consume(r.partition(msg.Subject()), md.Sequence.Stream)
		if r.s.opts.Bounded {
			r.left = md.NumPending
		}
		if !mine { // before its partition's start: an old subtask returned it
			if r.s.opts.Bounded && r.left == 0 {
				r.eof = true
				break
			}
			continue
		}
		if err := r.s.opts.Format.Decode(msg.Data(), &buf[k]); err != nil {
			merr := &connector.MalformedError{
				Where: fmt.Sprintf("stream %s sequence %d (subject %s)", r.s.opts.Stream, md.Sequence.Stream, msg.Subject()),
				Err:   err}
			if r.s.opts.OnMalformed != connector.Skip {
				r.cur.next = md.Sequence.Stream // the bad message is not consumed
				if k > 0 {
					r.pending = merr
					return k, nil
				}
				return 0, merr
			}
			if derr := r.deadLetter(ctx, msg, md, err); derr != nil {
				return k, derr
			}
			r.skipped++
			if r.s.opts.Malformed != nil {
				r.s.opts.Malformed(*merr)
			}
		} else {
			k++
		}
		if r.s.opts.Bounded && r.left == 0 {
			r.eof = true
			break
		}
	}
	if k == 0 && r.eof {
		return 0, io.EOF
	}
	return k, nil
}

// deadLetter republishes a message that could not be decoded.
func (r *reader[T]) deadLetter(ctx context.Context, msg jetstream.Msg, md *jetstream.MsgMetadata, cause error) error {
	if r.s.opts.DeadLetter == "" {
		return nil
	}
	out := nc.NewMsg(r.s.opts.DeadLetter)
	out.Data = msg.Data()
	out.Header.Set("Weir-Stream", md.Stream)
	out.Header.Set("Weir-Sequence", fmt.Sprint(md.Sequence.Stream))
	out.Header.Set("Weir-Subject", msg.Subject())
	out.Header.Set("Weir-Error", cause.Error())
	id := fmt.Sprintf("weir-dlq/%s/%d", md.Stream, md.Sequence.Stream)
	if _, err := r.js.PublishMsg(ctx, out, jetstream.WithMsgID(id)); err != nil {
		return fmt.Errorf("nats: dead-lettering stream %s sequence %d to %s: %w", md.Stream, md.Sequence.Stream, r.s.opts.DeadLetter, err)
	}
	return nil
}

// Position is the next stream sequence to read (or, after a rescale, the
// table of where each partition goes on, until the reader passed every
// start).
func (r *reader[T]) Position() connector.Position {
	return r.cur.position()
}

// partition returns which of the reader's partitions subject belongs
// to, or -1, only while the reader drops messages before its
// partitions' starts.
func (r *reader[T]) partition(subject string) int {
	if r.cur.starts == nil {
		return -1
	}
	for f, filter := range r.filters {
		if subjectMatches(filter, subject) {
			return f
		}
	}
	return -1
}

func (r *reader[T]) Close() error {
	r.stopConsumer()
	if r.conn != nil {
		r.conn.Close()
		r.conn = nil
	}
	return nil
}
