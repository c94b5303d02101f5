package nats

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	nc "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/format"
)

// SinkOptions configure a JetStream sink. Subject and Format are required.
type SinkOptions[T any] struct {
	ConnOptions
	// Subject is where records are published; a stream must capture it.
	Subject string
	// SubjectOf, if set, picks each record's subject instead (every
	// subject must be captured by a stream).
	SubjectOf func(T) string
	// Format encodes records as message payloads.
	Format format.Format[T]
	// JobID names the job in message ids and commit markers; two jobs
	// publishing through sinks with the same Subject and operator name
	// must set different ones. The default is "<subject>/<operator>".
	JobID string
	// MarkerBucket is the key-value bucket of commit markers, created if
	// missing; the default is "weir_sink_commits".
	MarkerBucket string
}

// Sink is a JetStream sink. Create it with NewSink.
type Sink[T any] struct{ opts SinkOptions[T] }

// NewSink checks the options that need no server and returns the sink.
func NewSink[T any](opts SinkOptions[T]) (*Sink[T], error) {
	switch {
	case opts.URL == "":
		return nil, errors.New("nats: sink needs a server URL")
	case opts.Subject == "":
		return nil, errors.New("nats: sink needs a subject")
	case opts.Format == nil:
		return nil, errors.New("nats: sink needs a format (connectors/format)")
	}
	if opts.MarkerBucket == "" {
		opts.MarkerBucket = "weir_sink_commits"
	}
	return &Sink[T]{opts: opts}, nil
}

// Open connects and checks that a stream captures the subject. The writer
// is a connector.Committer.
func (s *Sink[T]) Open(ctx context.Context, info connector.SubtaskInfo) (connector.Writer[T], error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	conn, err := s.opts.connect(ctx, fmt.Sprintf("weir %s sink %d/%d", s.opts.Subject, info.Subtask, info.Parallelism))
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(conn, jetstream.WithPublishAsyncMaxPending(4096))
	if err == nil {
		_, err = js.StreamNameBySubject(ctx, s.opts.Subject)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			err = fmt.Errorf("nats: no stream captures subject %s at %s", s.opts.Subject, redact(s.opts.URL))
		} else if err != nil {
			err = fmt.Errorf("nats: looking up the stream of subject %s: %w", s.opts.Subject, err)
		}
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	job := s.opts.JobID
	if job == "" {
		job = s.opts.Subject + "/" + info.Operator
	}
	return &writer[T]{s: s, conn: conn, js: js, job: job, subtask: info.Subtask, n: info.Parallelism}, nil
}

type writer[T any] struct {
	s       *Sink[T]
	conn    *nc.Conn
	js      jetstream.JetStream
	kv      jetstream.KeyValue // commit markers, in transactional mode
	job     string
	subtask int
	n       int    // the sink's parallelism
	txn     bool   // transactional mode, after Recover
	run     string // random id of this writer, part of message ids
	held    []byte // transactional: the encoded messages since the last PreCommit
	count   int    // messages in held
	acks    []jetstream.PubAckFuture
	err     error
}

func (w *writer[T]) subject(v T) string {
	if w.s.opts.SubjectOf != nil {
		return w.s.opts.SubjectOf(v)
	}
	return w.s.opts.Subject
}

// Write encodes the records. Without checkpoints they are published at
// once (Flush waits for the acknowledgements); in transactional mode they
// are held for PreCommit.
func (w *writer[T]) Write(ctx context.Context, batch []T) error {
	if w.err != nil {
		return w.err
	}
	for _, v := range batch {
		data, err := w.s.opts.Format.Encode(v)
		if err != nil {
			return fmt.Errorf("nats: sink to %s: %w", w.s.opts.Subject, err)
		}
		subj := w.subject(v)
		if w.txn {
			w.held = binary.AppendUvarint(w.held, uint64(len(subj)))
			w.held = append(w.held, subj...)
			w.held = binary.AppendUvarint(w.held, uint64(len(data)))
			w.held = append(w.held, data...)
			w.count++
			continue
		}
		f, err := w.js.PublishMsgAsync(&nc.Msg{Subject: subj, Data: data})
		if err != nil {
			w.err = fmt.Errorf("nats: publishing to %s: %w", subj, err)
			return w.err
		}
		w.acks = append(w.acks, f)
		if len(w.acks) >= 1024 {
			if err := w.waitAcks(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// waitAcks waits for the acknowledgements of every message published.
func (w *writer[T]) waitAcks(ctx context.Context) error {
	for _, f := range w.acks {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			w.err = fmt.Errorf("nats: publishing to %s: %w", f.Msg().Subject, err)
		case <-ctx.Done():
			w.err = ctx.Err()
		}
		if w.err != nil {
			break
		}
	}
	clear(w.acks)
	w.acks = w.acks[:0]
	return w.err
}

// Flush waits until the server stored everything published (without
// checkpoints); in transactional mode records wait for PreCommit.
func (w *writer[T]) Flush(ctx context.Context) error {
	if w.err != nil {
		return w.err
	}
	return w.waitAcks(ctx)
}

func (w *writer[T]) Close() error {
	if w.conn != nil {
		w.conn.Close()
		w.conn = nil
	}
	return nil
}

const txnMagic = 'N'

// PreCommit returns the held messages as the transaction (the engine stores
// it in the checkpoint: durable, not yet published), or nil if none.
func (w *writer[T]) PreCommit(_ context.Context, checkpoint int64) ([]byte, error) {
	if w.count == 0 {
		return nil, nil
	}
	txn := []byte{txnMagic}
	txn = binary.AppendUvarint(txn, uint64(len(w.run)))
	txn = append(txn, w.run...)
	txn = binary.AppendUvarint(txn, uint64(checkpoint))
	txn = binary.AppendUvarint(txn, uint64(w.count))
	txn = append(txn, w.held...)
	w.held, w.count = w.held[:0], 0
	return txn, nil
}

// markerKey is this subtask's key in the marker bucket.
func (w *writer[T]) markerKey() string { return w.markerPrefix() + strconv.Itoa(w.subtask) }

// markerPrefix is the job's part of its subtasks' marker keys, with the
// dot before the subtask.
func (w *writer[T]) markerPrefix() string {
	var b strings.Builder
	for _, c := range w.job {
		if c == '-' || c == '_' || c == '=' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String() + "."
}

// dropStaleMarkers deletes the markers of the job's subtasks at or beyond
// the sink's parallelism. An earlier run of a job of the same name at a
// higher parallelism leaves them; a run that starts afresh resets only
// its own subtasks' markers, so a later rescale up of the new run would
// take an old marker, recording a checkpoint id the new run has not
// reached, for its own and skip commits: output lost.
func (w *writer[T]) dropStaleMarkers(ctx context.Context) error {
	prefix := w.markerPrefix()
	keys, err := w.kv.ListKeysFiltered(ctx, prefix+"*")
	if err != nil {
		return fmt.Errorf("nats: listing the commit markers of %s: %w", w.job, err)
	}
	var stale []string
	for k := range keys.Keys() {
		if i, err := strconv.Atoi(strings.TrimPrefix(k, prefix)); err == nil && i >= w.n {
			stale = append(stale, k)
		}
	}
	for _, k := range stale {
		if err := w.kv.Delete(ctx, k); err != nil {
			return fmt.Errorf("nats: deleting the stale commit marker %s: %w", k, err)
		}
	}
	return nil
}

// committed returns the highest checkpoint this subtask committed.
func (w *writer[T]) committed(ctx context.Context) (int64, error) {
	e, err := w.kv.Get(ctx, w.markerKey())
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("nats: reading commit marker %s: %w", w.markerKey(), err)
	}
	return strconv.ParseInt(string(e.Value()), 10, 64)
}

// Commit publishes a transaction's messages with message ids
// <job>/<subtask>/<run>/<checkpoint>/<index> (run: a random id of the
// writer that pre-committed it, so that a later run reusing checkpoint ids
// is not taken for duplicates), waits for every acknowledgement,
// then records the checkpoint in the marker bucket. A transaction at or
// below the recorded checkpoint was committed before: nothing happens.
// Transactions are committed in checkpoint order, so one marker per
// subtask suffices.
func (w *writer[T]) Commit(ctx context.Context, txn []byte) error {
	if len(txn) == 0 {
		return nil
	}
	if w.kv == nil {
		return errors.New("nats: Commit before Recover")
	}
	run, ck, msgs, err := parseTxn(txn)
	if err != nil {
		return fmt.Errorf("nats: sink to %s: %w", w.s.opts.Subject, err)
	}
	done, err := w.committed(ctx)
	if err != nil {
		return err
	}
	if done >= ck {
		return nil
	}
	prefix := w.job + "/" + strconv.Itoa(w.subtask) + "/" + run + "/" + strconv.FormatInt(ck, 10) + "/"
	for i, m := range msgs {
		msg := nc.NewMsg(m.subject)
		msg.Data = m.data
		msg.Header.Set(jetstream.MsgIDHeader, prefix+strconv.Itoa(i))
		f, err := w.js.PublishMsgAsync(msg)
		if err != nil {
			w.err = fmt.Errorf("nats: committing checkpoint %d to %s: %w", ck, m.subject, err)
			return w.err
		}
		w.acks = append(w.acks, f)
		if len(w.acks) >= 1024 {
			if err := w.waitAcks(ctx); err != nil {
				return err
			}
		}
	}
	if err := w.waitAcks(ctx); err != nil {
		return err
	}
	if _, err := w.kv.Put(ctx, w.markerKey(), []byte(strconv.FormatInt(ck, 10))); err != nil {
		return fmt.Errorf("nats: recording commit marker %s: %w", w.markerKey(), err)
	}
	return nil
}

type heldMsg struct {
	subject string
	data    []byte
}

// parseTxn decodes a transaction: the writer's run id, the checkpoint and
// the messages.
func parseTxn(txn []byte) (string, int64, []heldMsg, error) {
	bad := errors.New("corrupt transaction")
	if txn[0] != txnMagic {
		return "", 0, nil, bad
	}
	p := txn[1:]
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return 0, false
		}
		p = p[n:]
		return v, true
	}
	bytes := func() ([]byte, bool) {
		l, ok := next()
		if !ok || uint64(len(p)) < l {
			return nil, false
		}
		b := p[:l]
		p = p[l:]
		return b, true
	}
	run, ok0 := bytes()
	ck, ok1 := next()
	n, ok2 := next()
	if !ok0 || !ok1 || !ok2 || n > uint64(len(p)) {
		return "", 0, nil, bad
	}
	msgs := make([]heldMsg, 0, n)
	for range n {
		s, ok := bytes()
		d, ok2 := bytes()
		if !ok || !ok2 {
			return "", 0, nil, bad
		}
		msgs = append(msgs, heldMsg{string(s), d})
	}
	if len(p) != 0 {
		return "", 0, nil, bad
	}
	return string(run), int64(ck), msgs, nil
}

// Recover switches the writer to transactional mode, opens (or creates)
// the marker bucket, and commits the restored checkpoint's transactions.
// Nothing of a later checkpoint was published, so nothing is aborted. On a
// fresh start (restored 0) the subtask's marker is reset, as checkpoint
// ids start over, and subtask 0 deletes the markers of subtasks beyond the
// parallelism (dropStaleMarkers).
func (w *writer[T]) Recover(ctx context.Context, restored int64, commit [][]byte) error {
	w.txn = true
	w.run = rand.Text()[:12]
	kv, err := w.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: w.s.opts.MarkerBucket, History: 1})
	if err != nil {
		return fmt.Errorf("nats: opening the marker bucket %s: %w", w.s.opts.MarkerBucket, err)
	}
	w.kv = kv
	if restored == 0 {
		if _, err := kv.Put(ctx, w.markerKey(), []byte("0")); err != nil {
			return fmt.Errorf("nats: resetting commit marker %s: %w", w.markerKey(), err)
		}
		if w.subtask == 0 {
			if err := w.dropStaleMarkers(ctx); err != nil {
				return err
			}
		}
	}
	for _, t := range commit {
		if err := w.Commit(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

var _ connector.Committer = (*writer[int])(nil)
