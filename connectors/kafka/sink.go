package kafka

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/format"
)

// Delivery is the sink's delivery guarantee.
type Delivery int

const (
	// ExactlyOnce writes each checkpoint's records in Kafka transactions
	// that commit when the checkpoint completes. It is the default.
	ExactlyOnce Delivery = iota
	// AtLeastOnce writes with the idempotent producer and flushes at every
	// checkpoint: after a failure, records since the last completed
	// checkpoint are written again.
	AtLeastOnce
)

func (d Delivery) String() string {
	if d == AtLeastOnce {
		return "at-least-once"
	}
	return "exactly-once"
}

// Partitioner chooses a record's partition.
type Partitioner string

const (
	// HashPartitioner (the default) hashes the key with murmur2, as the
	// Java client does, so a key always goes to the same partition;
	// records without a key stick to a partition per batch.
	HashPartitioner Partitioner = "hash"
	// RoundRobinPartitioner spreads records evenly, ignoring keys.
	RoundRobinPartitioner Partitioner = "round-robin"
	// StickyPartitioner fills a batch per partition, ignoring keys.
	StickyPartitioner Partitioner = "sticky"
	// ManualPartitioner takes the partition from SinkOptions.Partition.
	ManualPartitioner Partitioner = "manual"
)

// SinkOptions configure Sink. Brokers, Topic and Format are required.
type SinkOptions[T any] struct {
	Brokers []string
	Topic   string
	// Format encodes record values.
	Format format.Format[T]
	// Key, if set, gives each record's key; nil means no key.
	Key func(T) []byte
	// Headers, if set, gives each record's headers.
	Headers func(T) []Header
	// Partitioner chooses partitions; "" means HashPartitioner.
	Partitioner Partitioner
	// Partition gives the partition under ManualPartitioner.
	Partition func(T) int32
	// Delivery is ExactlyOnce (default) or AtLeastOnce.
	Delivery Delivery
	// TransactionalIDPrefix names the transactions of an exactly-once
	// sink: subtask s uses the transactional ids <prefix>-<s>-<n>, n
	// counting its transactions. Two sinks that run at the same time must
	// not share a prefix. "" means "weir-<topic>-<operator name>".
	TransactionalIDPrefix string
	// TransactionTimeout is how long the broker keeps a transaction open
	// before aborting it; it must cover a checkpoint interval plus the time
	// a failed job needs to restore, or records of a completed checkpoint
	// are lost. It must not exceed the broker's
	// transaction.max.timeout.ms (default 15 minutes), which Open checks.
	// 0 means 10 minutes.
	TransactionTimeout time.Duration
	// ConnectTimeout bounds how long Open waits for the brokers (with
	// retries and backoff); 0 means 30 seconds.
	ConnectTimeout time.Duration
	// ClientOptions are passed on to every franz-go client of the sink.
	ClientOptions []kgo.Opt
}

// Sink returns a sink writing records to opts.Topic. It checks the
// options; Open then checks the topic exists and, for ExactlyOnce, that
// TransactionTimeout does not exceed the broker's maximum.
func Sink[T any](opts SinkOptions[T]) (connector.Sink[T], error) {
	switch {
	case len(opts.Brokers) == 0:
		return nil, optionErr("sink", "Brokers is empty")
	case opts.Topic == "":
		return nil, optionErr("sink", "Topic is empty")
	case opts.Format == nil:
		return nil, optionErr("sink", "Format is nil (use format.JSON or format.Avro)")
	case opts.Delivery != ExactlyOnce && opts.Delivery != AtLeastOnce:
		return nil, optionErr("sink", "Delivery %d is neither ExactlyOnce nor AtLeastOnce", opts.Delivery)
	case opts.TransactionTimeout < 0 || (opts.TransactionTimeout > 0 && opts.TransactionTimeout < time.Second):
		return nil, optionErr("sink", "TransactionTimeout %v is below one second", opts.TransactionTimeout)
	}
	switch opts.Partitioner {
	case "", HashPartitioner, RoundRobinPartitioner, StickyPartitioner:
		if opts.Partition != nil {
			return nil, optionErr("sink", "Partition is set but Partitioner is %q, not %q", opts.Partitioner, ManualPartitioner)
		}
	case ManualPartitioner:
		if opts.Partition == nil {
			return nil, optionErr("sink", "Partitioner %q needs Partition", ManualPartitioner)
		}
	default:
		return nil, optionErr("sink", "unknown Partitioner %q (want hash, round-robin, sticky or manual)", opts.Partitioner)
	}
	if opts.TransactionTimeout == 0 {
		opts.TransactionTimeout = 10 * time.Minute
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = defaultConnectTimeout
	}
	return &sink[T]{opts: opts}, nil
}

type sink[T any] struct{ opts SinkOptions[T] }

func (s *sink[T]) partitioner() kgo.Partitioner {
	switch s.opts.Partitioner {
	case RoundRobinPartitioner:
		return kgo.RoundRobinPartitioner()
	case StickyPartitioner:
		return kgo.StickyPartitioner()
	case ManualPartitioner:
		return kgo.ManualPartitioner()
	}
	return kgo.StickyKeyPartitioner(nil)
}

// producerOpts are the options of the sink's producing clients.
func (s *sink[T]) producerOpts(extra ...kgo.Opt) []kgo.Opt {
	more := append([]kgo.Opt{kgo.DefaultProduceTopic(s.opts.Topic), kgo.RecordPartitioner(s.partitioner()),
		kgo.ProducerLinger(5 * time.Millisecond), kgo.RequiredAcks(kgo.AllISRAcks())}, extra...)
	return clientOpts(s.opts.Brokers, s.opts.ClientOptions, more...)
}

func (s *sink[T]) Open(ctx context.Context, info connector.SubtaskInfo) (connector.Writer[T], error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	if s.opts.Delivery == AtLeastOnce {
		cl, err := kgo.NewClient(s.producerOpts()...)
		if err != nil {
			return nil, fmt.Errorf("kafka sink: %w", err)
		}
		if _, err := ping(ctx, cl, "sink", s.opts.Brokers, s.opts.ConnectTimeout, s.opts.Topic); err != nil {
			cl.Close()
			return nil, err
		}
		return &writer[T]{s: s, cl: cl}, nil
	}
	return openTxnWriter(ctx, s, info)
}

// record builds the Kafka record of v.
func (s *sink[T]) record(v T) (*kgo.Record, error) {
	val, err := s.opts.Format.Encode(v)
	if err != nil {
		return nil, fmt.Errorf("kafka sink to topic %q: %w", s.opts.Topic, err)
	}
	r := &kgo.Record{Value: val}
	if s.opts.Key != nil {
		r.Key = s.opts.Key(v)
	}
	if s.opts.Headers != nil {
		for _, h := range s.opts.Headers(v) {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
		}
	}
	if s.opts.Partition != nil {
		r.Partition = s.opts.Partition(v)
	}
	return r, nil
}

// produced collects the first error of asynchronous produce calls.
type produced struct {
	mu    sync.Mutex
	err   error
	topic string
}

func (p *produced) promise(r *kgo.Record, err error) {
	if err == nil {
		return
	}
	p.mu.Lock()
	if p.err == nil {
		p.err = fmt.Errorf("kafka sink: producing to topic %q partition %d: %w", p.topic, r.Partition, err)
	}
	p.mu.Unlock()
}

func (p *produced) first() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// produceAll encodes and produces batch asynchronously on cl.
func (s *sink[T]) produceAll(ctx context.Context, cl *kgo.Client, p *produced, batch []T) error {
	for i := range batch {
		r, err := s.record(batch[i])
		if err != nil {
			return err
		}
		cl.Produce(ctx, r, p.promise)
	}
	return p.first()
}

// writer is the at-least-once writer: one idempotent producer, flushed
// at checkpoints.
type writer[T any] struct {
	s    *sink[T]
	cl   *kgo.Client
	prod produced
}

func (w *writer[T]) Write(ctx context.Context, batch []T) error {
	w.prod.topic = w.s.opts.Topic
	return w.s.produceAll(ctx, w.cl, &w.prod, batch)
}

// Flush waits until the brokers acknowledged every record written.
func (w *writer[T]) Flush(ctx context.Context) error {
	if err := w.cl.Flush(ctx); err != nil {
		return fmt.Errorf("kafka sink: flushing to topic %q: %w", w.s.opts.Topic, err)
	}
	return w.prod.first()
}

func (w *writer[T]) Close() error {
	w.cl.Close()
	return nil
}
