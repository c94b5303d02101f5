package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weir-stream/weir/connector"
)

// The exactly-once writer: two-phase commit with Kafka transactions
// (connector.Committer).
//
// Every transaction has a transactional id of its own,
// <prefix>-<subtask>-<n>, with n counting the subtask's transactions, and
// a franz-go client of its own. A Kafka producer holds one transaction at
// a time, and the writer must go on writing after a checkpoint's barrier
// while that checkpoint's transaction waits to be committed, so it cannot
// use one transactional id for both. (Flink's KafkaSink names its
// transactions the same way.)
//
// PreCommit flushes the transaction and returns its description:
// transactional id, producer id and epoch, and the n of the writer's next
// transaction. Commit ends it with the client that wrote it. After a
// restart that client is gone, and a new producer with the same
// transactional id would abort the transaction when it initialises, so
// Recover commits a restored transaction with a raw EndTxn request that
// carries the stored producer id and epoch, as the lost producer would
// have sent it. Because a transactional id carries a single transaction,
// that request can only ever commit the transaction it describes, and
// repeating it for a transaction already committed is harmless.
//
// Recover then aborts what an earlier attempt left behind: starting at the
// restored checkpoint's next n, it initialises the transactional ids in
// turn (InitProducerID aborts an open transaction) until it meets one that
// was never used, and goes on from there. An attempt uses its ids in order
// without gaps, so none is missed. Each old subtask counts its own
// transactions, so the description names the subtask whose ids it counts:
// restored at a lower parallelism, subtask j also receives the
// transactions of old subtasks j+n, j+2n, ..., and aborts what each of
// them left open from that subtask's own next n.

// txnDesc describes a pre-committed transaction; it is what the engine
// stores in the checkpoint.
type txnDesc struct {
	id      string // transactional id; "" when nothing was written
	pid     int64
	epoch   int16
	next    uint64 // n of the writer's next transaction
	subtask int    // the writer's subtask, whose ids next counts; -1: not recorded (version 1)
}

// Version 2 added the subtask; version 1 descriptions still decode.
const txnDescVersion = 2

func (d txnDesc) encode() []byte {
	b := []byte{txnDescVersion}
	b = binary.AppendUvarint(b, d.next)
	b = binary.AppendUvarint(b, uint64(d.subtask))
	if d.id == "" {
		return b
	}
	b = binary.AppendUvarint(b, uint64(len(d.id)))
	b = append(b, d.id...)
	b = binary.AppendVarint(b, d.pid)
	return binary.AppendVarint(b, int64(d.epoch))
}

func decodeTxn(b []byte) (txnDesc, error) {
	var d txnDesc
	bad := func(what string) (txnDesc, error) {
		return txnDesc{}, fmt.Errorf("kafka sink: corrupt transaction in checkpoint (%s): %x", what, b)
	}
	if len(b) == 0 || b[0] < 1 || b[0] > txnDescVersion {
		return bad("version")
	}
	r := b[1:]
	next, n := binary.Uvarint(r)
	if n <= 0 {
		return bad("next")
	}
	d.next, r, d.subtask = next, r[n:], -1
	if b[0] >= 2 {
		sub, n := binary.Uvarint(r)
		if n <= 0 || sub > math.MaxInt32 {
			return bad("subtask")
		}
		d.subtask, r = int(sub), r[n:]
	}
	if len(r) == 0 {
		return d, nil
	}
	l, n := binary.Uvarint(r)
	if n <= 0 || uint64(len(r)-n) < l {
		return bad("id")
	}
	d.id, r = string(r[n:n+int(l)]), r[n+int(l):]
	pid, n := binary.Varint(r)
	if n <= 0 {
		return bad("producer id")
	}
	r = r[n:]
	epoch, n := binary.Varint(r)
	if n <= 0 || n != len(r) {
		return bad("epoch")
	}
	d.pid, d.epoch = pid, int16(epoch)
	return d, nil
}

// txn is one open or pre-committed transaction.
type txn struct {
	id   string
	cl   *kgo.Client
	prod produced
}

type txnWriter[T any] struct {
	s         *sink[T]
	prefix    string // TransactionalIDPrefix or its default
	subtask   int
	admin     *kgo.Client // raw EndTxn and InitProducerID requests
	next      uint64
	cur       *txn
	pending   map[string]*txn // pre-committed, by transactional id
	recovered bool            // Recover was called: two-phase commit
	cleaned   bool            // lingering transactions were aborted
}

func openTxnWriter[T any](ctx context.Context, s *sink[T], info connector.SubtaskInfo) (*txnWriter[T], error) {
	admin, err := kgo.NewClient(clientOpts(s.opts.Brokers, s.opts.ClientOptions)...)
	if err != nil {
		return nil, fmt.Errorf("kafka sink: %w", err)
	}
	if _, err := ping(ctx, admin, "sink", s.opts.Brokers, s.opts.ConnectTimeout, s.opts.Topic); err != nil {
		admin.Close()
		return nil, err
	}
	if err := checkTxnTimeout(ctx, admin, s.opts.TransactionTimeout); err != nil {
		admin.Close()
		return nil, err
	}
	prefix := s.opts.TransactionalIDPrefix
	if prefix == "" {
		prefix = "weir-" + s.opts.Topic + "-" + info.Operator
	}
	return &txnWriter[T]{s: s, admin: admin, pending: map[string]*txn{}, prefix: prefix, subtask: info.Subtask}, nil
}

// checkTxnTimeout fails if timeout exceeds the broker's
// transaction.max.timeout.ms.
func checkTxnTimeout(ctx context.Context, cl *kgo.Client, timeout time.Duration) error {
	adm := kadm.NewClient(cl)
	md, err := adm.BrokerMetadata(ctx)
	if err != nil || len(md.Brokers) == 0 {
		return fmt.Errorf("kafka sink: reading broker metadata: %v", err)
	}
	cfgs, err := adm.DescribeBrokerConfigs(ctx, md.Brokers[0].NodeID)
	if err != nil {
		return fmt.Errorf("kafka sink: reading the broker's transaction.max.timeout.ms: %w", err)
	}
	for _, rc := range cfgs {
		for _, c := range rc.Configs {
			if c.Key != "transaction.max.timeout.ms" || c.Value == nil {
				continue
			}
			ms, err := strconv.ParseInt(*c.Value, 10, 64)
			if err != nil {
				return fmt.Errorf("kafka sink: broker's transaction.max.timeout.ms %q: %w", *c.Value, err)
			}
			if max := time.Duration(ms) * time.Millisecond; timeout > max {
				return fmt.Errorf("kafka sink: %w: TransactionTimeout %v exceeds the broker's transaction.max.timeout.ms (%v); lower the timeout or raise the broker's maximum",
					ErrOption, timeout, max)
			}
			return nil
		}
	}
	return nil // not reported (restricted ACLs): InitProducerID will judge
}

// txnID returns the transactional id of subtask's n-th transaction:
// <prefix>-<subtask>-<n>.
func (w *txnWriter[T]) txnID(subtask int, n uint64) string {
	return w.prefix + "-" + strconv.Itoa(subtask) + "-" + strconv.FormatUint(n, 10)
}

func (w *txnWriter[T]) Write(ctx context.Context, batch []T) error {
	if len(batch) == 0 {
		return nil
	}
	if w.cur == nil {
		if err := w.begin(ctx); err != nil {
			return err
		}
	}
	return w.s.produceAll(ctx, w.cur.cl, &w.cur.prod, batch)
}

// begin opens the next transaction.
func (w *txnWriter[T]) begin(ctx context.Context) error {
	if !w.cleaned {
		next, err := w.abortLingering(ctx, w.subtask, w.next)
		if err != nil {
			return err
		}
		w.next, w.cleaned = next, true
	}
	id := w.txnID(w.subtask, w.next)
	w.next++
	cl, err := kgo.NewClient(w.s.producerOpts(kgo.TransactionalID(id),
		kgo.TransactionTimeout(w.s.opts.TransactionTimeout))...)
	if err != nil {
		return fmt.Errorf("kafka sink: %w", err)
	}
	if err := cl.BeginTransaction(); err != nil {
		cl.Close()
		return fmt.Errorf("kafka sink: beginning transaction %s: %w", id, err)
	}
	w.cur = &txn{id: id, cl: cl, prod: produced{topic: w.s.opts.Topic}}
	return nil
}

// flushCur waits until the open transaction's records are acknowledged.
func (w *txnWriter[T]) flushCur(ctx context.Context) error {
	if err := w.cur.cl.Flush(ctx); err != nil {
		return fmt.Errorf("kafka sink: flushing transaction %s: %w", w.cur.id, err)
	}
	return w.cur.prod.first()
}

// Flush makes the records durable. With two-phase commit they stay
// invisible until their checkpoint completes; without it (no
// checkpoints), Flush commits the open transaction.
func (w *txnWriter[T]) Flush(ctx context.Context) error {
	if w.cur == nil {
		return nil
	}
	if err := w.flushCur(ctx); err != nil {
		return err
	}
	if w.recovered {
		return nil
	}
	t := w.cur
	w.cur = nil
	defer t.cl.Close()
	if err := t.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("kafka sink: committing transaction %s: %w", t.id, err)
	}
	return nil
}

// PreCommit flushes the open transaction and describes it.
func (w *txnWriter[T]) PreCommit(ctx context.Context, _ int64) ([]byte, error) {
	if w.cur == nil {
		return txnDesc{next: w.next, subtask: w.subtask}.encode(), nil
	}
	if err := w.flushCur(ctx); err != nil {
		return nil, err
	}
	pid, epoch, err := w.cur.cl.ProducerID(ctx)
	if err != nil {
		return nil, fmt.Errorf("kafka sink: producer id of transaction %s: %w", w.cur.id, err)
	}
	d := txnDesc{id: w.cur.id, pid: pid, epoch: epoch, next: w.next, subtask: w.subtask}
	w.pending[w.cur.id] = w.cur
	w.cur = nil
	return d.encode(), nil
}

// Commit commits a pre-committed transaction; committing it again does
// nothing.
func (w *txnWriter[T]) Commit(ctx context.Context, b []byte) error {
	d, err := decodeTxn(b)
	if err != nil || d.id == "" {
		return err
	}
	if t, ok := w.pending[d.id]; ok {
		delete(w.pending, d.id)
		defer t.cl.Close()
		if err := t.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			return fmt.Errorf("kafka sink: committing transaction %s: %w", d.id, err)
		}
		return nil
	}
	return w.commitRaw(ctx, d)
}

// Recover commits the restored checkpoint's transactions and aborts every
// later one of this subtask and of each old subtask whose transactions it
// received (a restore at a lower parallelism).
func (w *txnWriter[T]) Recover(ctx context.Context, _ int64, commit [][]byte) error {
	w.recovered = true
	next := map[int]uint64{w.subtask: w.next} // by old subtask: its next n
	for _, b := range commit {
		d, err := decodeTxn(b)
		if err != nil {
			return err
		}
		sub := d.subtask
		if sub < 0 { // version 1: counted this subtask's ids, as far as it knew
			sub = w.subtask
		}
		next[sub] = max(next[sub], d.next)
		if d.id != "" {
			if err := w.commitRaw(ctx, d); err != nil {
				return err
			}
		}
	}
	for _, sub := range slices.Sorted(maps.Keys(next)) {
		unused, err := w.abortLingering(ctx, sub, next[sub])
		if err != nil {
			return err
		}
		if sub == w.subtask {
			w.next = unused
		}
	}
	w.cleaned = true
	return nil
}

// retriable reports whether a transaction coordinator's error code means
// "try again shortly".
func retriable(err error) bool {
	return errors.Is(err, kerr.ConcurrentTransactions) || errors.Is(err, kerr.CoordinatorLoadInProgress) ||
		errors.Is(err, kerr.NotCoordinator) || errors.Is(err, kerr.CoordinatorNotAvailable)
}

// retry sends a transaction coordinator request until it gets an answer
// that is not retriable, backing off in between.
func retry(ctx context.Context, what string, do func() error) error {
	backoff := 20 * time.Millisecond
	for {
		err := do()
		if err == nil || !retriable(err) {
			return err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w (last answer: %v)", what, ctx.Err(), err)
		case <-t.C:
		}
		backoff = min(2*backoff, time.Second)
	}
}

// commitRaw commits the transaction d describes as its lost producer
// would have: EndTxn with its producer id and epoch.
func (w *txnWriter[T]) commitRaw(ctx context.Context, d txnDesc) error {
	var code error
	err := retry(ctx, "kafka sink: committing transaction "+d.id, func() error {
		req := kmsg.NewPtrEndTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = d.id, d.pid, d.epoch, true
		resp, err := req.RequestWith(ctx, w.admin)
		if err != nil {
			return err
		}
		code = kerr.ErrorForCode(resp.ErrorCode)
		return code
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kerr.InvalidTxnState), errors.Is(err, kerr.InvalidProducerEpoch),
		errors.Is(err, kerr.ProducerFenced), errors.Is(err, kerr.InvalidProducerIDMapping):
		return w.checkCommitted(ctx, d, err)
	}
	return fmt.Errorf("kafka sink: committing transaction %s (producer %d, epoch %d): %w", d.id, d.pid, d.epoch, err)
}

// checkCommitted decides, after EndTxn was refused, whether the
// transaction was committed before (fine) or aborted (its records are
// lost: fail loudly).
func (w *txnWriter[T]) checkCommitted(ctx context.Context, d txnDesc, refused error) error {
	described, err := kadm.NewClient(w.admin).DescribeTransactions(ctx, d.id)
	if err != nil {
		return fmt.Errorf("kafka sink: EndTxn for transaction %s was refused (%v) and describing it failed: %w", d.id, refused, err)
	}
	t, ok := described[d.id]
	if ok && t.Err == nil && t.ProducerID == d.pid && t.State == "CompleteCommit" {
		return nil
	}
	state := "unknown"
	if ok {
		state = t.State
	}
	return fmt.Errorf("kafka sink: transaction %s of a completed checkpoint cannot be committed (broker says %v, state %s): "+
		"its records are lost; was it open longer than TransactionTimeout (%v)?", d.id, refused, state, w.s.opts.TransactionTimeout)
}

// abortLingering aborts the transactions an earlier attempt of subtask
// may have left open, from its transactional id n = from on, and returns
// the first n that was never used.
func (w *txnWriter[T]) abortLingering(ctx context.Context, subtask int, from uint64) (uint64, error) {
	for n := from; ; n++ {
		id := w.txnID(subtask, n)
		var epoch int16
		err := retry(ctx, "kafka sink: aborting transaction "+id, func() error {
			req := kmsg.NewPtrInitProducerIDRequest()
			req.TransactionalID = &id
			req.TransactionTimeoutMillis = int32(w.s.opts.TransactionTimeout.Milliseconds())
			resp, err := req.RequestWith(ctx, w.admin)
			if err != nil {
				return err
			}
			epoch = resp.ProducerEpoch
			return kerr.ErrorForCode(resp.ErrorCode)
		})
		if err != nil {
			return 0, fmt.Errorf("kafka sink: aborting lingering transaction %s: %w", id, err)
		}
		if epoch == 0 {
			return n, nil // never used before: neither are the ids after it
		}
	}
}

// Close aborts the open transaction, if any, and releases the clients.
// Pre-committed transactions stay open on the broker: the engine commits
// them, after a restart through Recover.
func (w *txnWriter[T]) Close() error {
	if w.cur != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = w.cur.cl.AbortBufferedRecords(ctx)
		_ = w.cur.cl.EndTransaction(ctx, kgo.TryAbort) // best effort: Recover aborts it otherwise
		cancel()
		w.cur.cl.Close()
		w.cur = nil
	}
	for id, t := range w.pending {
		t.cl.Close()
		delete(w.pending, id)
	}
	w.admin.Close()
	return nil
}
