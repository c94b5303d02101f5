package kafka

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/format"
)

// Start says where a source without a checkpoint starts reading. A
// restored source always resumes at its checkpointed offsets.
type Start int

const (
	// StartEarliest reads every partition from its first offset (default).
	StartEarliest Start = iota
	// StartLatest reads only records written after the source opened.
	StartLatest
	// StartTimestamp starts at the first record whose timestamp is at or
	// after SourceOptions.StartTime.
	StartTimestamp
	// StartGroupOffsets starts at the offsets committed by
	// SourceOptions.Group; partitions without one start at the earliest.
	StartGroupOffsets
)

// SourceOptions configure Source. Brokers, Topics and Format (or Decode)
// are required.
type SourceOptions[T any] struct {
	Brokers []string
	Topics  []string
	// Format decodes record values.
	Format format.Format[T]
	// Decode, if not nil, decodes each record in place of Format (which
	// must then be nil), for records whose key or metadata (topic,
	// partition, offset, timestamp, headers) belong in the T. It is
	// handed a zeroed *v and must not retain rec; its error makes the
	// record malformed, as a Format's would. Subtasks call it
	// concurrently.
	Decode func(rec *kgo.Record, v *T) error
	// Start, with StartTime for StartTimestamp, chooses where a fresh
	// source starts.
	Start     Start
	StartTime time.Time
	// Group is the consumer group whose offsets StartGroupOffsets reads
	// and CommitOffsets writes. The source never joins the group: it
	// assigns partitions to subtasks itself.
	Group string
	// CommitOffsets commits each subtask's offsets to Group whenever the
	// engine takes its position for a checkpoint, for monitoring (lag)
	// only: the checkpoint, not the group, decides where a restored job
	// resumes.
	CommitOffsets bool
	// ReadUncommitted reads records of open and aborted transactions too;
	// by default the source reads with read_committed isolation.
	ReadUncommitted bool
	// OnMalformed says what happens to a record whose value does not
	// decode: connector.Fail (default) fails the job with a
	// *connector.MalformedError naming topic, partition and offset;
	// connector.Skip drops it, counts it in Malformed and, if
	// DeadLetterTopic is set, writes it there.
	OnMalformed connector.MalformedPolicy
	// DeadLetterTopic receives the undecodable records under Skip, with
	// their key, value and headers and the headers weir-error,
	// weir-topic, weir-partition and weir-offset added.
	DeadLetterTopic string
	// Malformed, if not nil, counts the records skipped by all subtasks.
	Malformed *atomic.Int64
	// SkipTombstones drops every record with a null value (a tombstone,
	// the deletion of its key in a compacted topic) before it is
	// decoded: it is neither malformed nor counted. Without it a
	// tombstone reaches Decode, and Format fails to decode it, so the
	// record is malformed under OnMalformed. RecordSource delivers
	// tombstones as records with Tombstone set unless this is set.
	SkipTombstones bool
	// Bounded makes each reader stop (io.EOF) at the end offsets its
	// partitions had when it opened (the last stable offsets under
	// read_committed): a batch read of what the topics hold.
	Bounded bool
	// DiscoveryInterval is how often an unbounded source looks for new
	// partitions of its topics; 0 means 10 seconds, negative never.
	DiscoveryInterval time.Duration
	// PartitionIdleTimeout makes a partition that yielded no record for
	// this long stop holding back the subtask's watermark (with
	// weir.WithTimestamps); 0 means partitions never count as idle.
	PartitionIdleTimeout time.Duration
	// ConnectTimeout bounds how long Open waits for the brokers (with
	// retries and backoff); 0 means 30 seconds.
	ConnectTimeout time.Duration
	// ClientOptions are passed on to the source's franz-go clients.
	ClientOptions []kgo.Opt
}

// Source returns a source reading opts.Topics. It checks the options;
// Open then checks that the topics exist.
func Source[T any](opts SourceOptions[T]) (connector.Source[T], error) {
	switch {
	case len(opts.Brokers) == 0:
		return nil, optionErr("source", "Brokers is empty")
	case len(opts.Topics) == 0:
		return nil, optionErr("source", "Topics is empty")
	case opts.Format == nil && opts.Decode == nil:
		return nil, optionErr("source", "Format is nil (use format.JSON or format.Avro)")
	case opts.Format != nil && opts.Decode != nil:
		return nil, optionErr("source", "both Format and Decode are set")
	case opts.Start < StartEarliest || opts.Start > StartGroupOffsets:
		return nil, optionErr("source", "unknown Start %d", opts.Start)
	case opts.Start == StartTimestamp && opts.StartTime.IsZero():
		return nil, optionErr("source", "StartTimestamp needs StartTime")
	case opts.Start == StartGroupOffsets && opts.Group == "":
		return nil, optionErr("source", "StartGroupOffsets needs Group")
	case opts.CommitOffsets && opts.Group == "":
		return nil, optionErr("source", "CommitOffsets needs Group")
	case opts.DeadLetterTopic != "" && opts.OnMalformed != connector.Skip:
		return nil, optionErr("source", "DeadLetterTopic %q needs OnMalformed connector.Skip", opts.DeadLetterTopic)
	case opts.OnMalformed != connector.Fail && opts.OnMalformed != connector.Skip:
		return nil, optionErr("source", "unknown OnMalformed %d", opts.OnMalformed)
	}
	for _, t := range opts.Topics {
		if t == "" || t == opts.DeadLetterTopic {
			return nil, optionErr("source", "bad topic %q in Topics", t)
		}
	}
	if opts.DiscoveryInterval == 0 {
		opts.DiscoveryInterval = 10 * time.Second
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = defaultConnectTimeout
	}
	if opts.Decode == nil {
		f := opts.Format
		opts.Decode = func(rec *kgo.Record, v *T) error { return f.Decode(rec.Value, v) }
	}
	return &source[T]{opts: opts}, nil
}

type source[T any] struct{ opts SourceOptions[T] }

// owner returns the subtask that reads partition p of topic: partitions of
// a topic go round-robin over the subtasks, starting at a subtask chosen
// by the topic's name, so that several topics spread evenly.
func owner(topic string, p int32, parallelism int) int {
	h := fnv.New32a()
	h.Write([]byte(topic))
	start := int(h.Sum32() % uint32(parallelism))
	return (start + int(p)) % parallelism
}

func (s *source[T]) Open(ctx context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[T], error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	restored, err := decodePosition(pos)
	if err != nil {
		return nil, err
	}
	iso := kgo.ReadCommitted()
	if s.opts.ReadUncommitted {
		iso = kgo.ReadUncommitted()
	}
	cl, err := kgo.NewClient(clientOpts(s.opts.Brokers, s.opts.ClientOptions,
		kgo.FetchIsolationLevel(iso), kgo.KeepControlRecords(), kgo.FetchMaxWait(100*time.Millisecond))...)
	if err != nil {
		return nil, fmt.Errorf("kafka source: %w", err)
	}
	r := &reader[T]{s: s, info: info, cl: cl, adm: kadm.NewClient(cl), parts: map[tp]*partition{},
		progress: minTime}
	if err := r.open(ctx, restored); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// open assigns the subtask's partitions and resolves their offsets.
func (r *reader[T]) open(ctx context.Context, restored map[tp]int64) error {
	counts, err := ping(ctx, r.cl, "source", r.s.opts.Brokers, r.s.opts.ConnectTimeout, r.s.opts.Topics...)
	if err != nil {
		return err
	}
	for p := range restored {
		if !r.owns(p) {
			return fmt.Errorf("kafka source: the position of subtask %d of %d names %s, which is not one of its partitions (did the source's topics or parallelism change?)",
				r.info.Subtask, r.info.Parallelism, p)
		}
	}
	if err := r.assign(ctx, counts, restored, r.s.opts.Start); err != nil {
		return err
	}
	r.discovered = time.Now()
	if r.s.opts.Bounded {
		return r.bound(ctx)
	}
	return nil
}

func (r *reader[T]) owns(p tp) bool {
	return owner(p.topic, p.partition, r.info.Parallelism) == r.info.Subtask
}

// assign starts consuming the partitions this subtask owns and does not
// read yet: at their restored offset, or else where start says.
func (r *reader[T]) assign(ctx context.Context, counts map[string]int, restored map[tp]int64, start Start) error {
	var fresh []tp
	for _, topic := range r.s.opts.Topics {
		for i := range counts[topic] {
			p := tp{topic, int32(i)}
			if _, ok := r.parts[p]; ok || !r.owns(p) {
				continue
			}
			if off, ok := restored[p]; ok {
				r.parts[p] = &partition{next: off, maxTS: minTime}
			} else {
				fresh = append(fresh, p)
			}
		}
	}
	for p := range restored {
		if _, ok := r.parts[p]; !ok {
			return fmt.Errorf("kafka source: restored partition %s no longer exists", p)
		}
	}
	offs, err := r.startOffsets(ctx, fresh, start)
	if err != nil {
		return err
	}
	for _, p := range fresh {
		r.parts[p] = &partition{next: offs[p], maxTS: minTime}
	}
	if r.s.opts.Bounded {
		return nil // bound and step consume one partition at a time
	}
	for p, st := range r.parts {
		if !st.consuming {
			r.consume(p, st)
		}
	}
	return nil
}

// consume starts fetching p at its next offset.
func (r *reader[T]) consume(p tp, st *partition) {
	st.consuming, st.active = true, time.Now()
	r.cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{p.topic: {p.partition: kgo.NewOffset().At(st.next)}})
}

// step makes a bounded reader fetch the first partition, in topic and
// partition order, that has not reached its end, and stop fetching the
// ones that have. Reading partitions one after another keeps the order of
// a bounded reader's records deterministic, as connector.Source requires;
// an unbounded reader interleaves its partitions as records arrive.
func (r *reader[T]) step() {
	for _, p := range sortedParts(r.parts) {
		st := r.parts[p]
		if st.next < st.end {
			if !st.consuming {
				r.consume(p, st)
			}
			return
		}
		if st.consuming {
			st.consuming = false
			r.cl.RemoveConsumePartitions(map[string][]int32{p.topic: {p.partition}})
		}
	}
}

func sortedParts(m map[tp]*partition) []tp {
	ps := make([]tp, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	sortTP(ps)
	return ps
}

// startOffsets resolves where the given partitions start.
func (r *reader[T]) startOffsets(ctx context.Context, ps []tp, start Start) (map[tp]int64, error) {
	out := map[tp]int64{}
	if len(ps) == 0 {
		return out, nil
	}
	topics := map[string]bool{}
	for _, p := range ps {
		topics[p.topic] = true
	}
	var names []string
	for t := range topics {
		names = append(names, t)
	}
	earliest, err := r.adm.ListStartOffsets(ctx, names...)
	if err == nil {
		err = earliest.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("kafka source: listing start offsets of %v: %w", names, err)
	}
	var at kadm.ListedOffsets
	var group kadm.OffsetResponses
	switch start {
	case StartLatest:
		at, err = r.adm.ListEndOffsets(ctx, names...)
	case StartTimestamp:
		at, err = r.adm.ListOffsetsAfterMilli(ctx, r.s.opts.StartTime.UnixMilli(), names...)
	case StartGroupOffsets:
		// The group coordinator may still be loading (a fresh cluster
		// creates its offsets topic on first use): retry.
		err = retry(ctx, "fetching offsets of group "+r.s.opts.Group, func() error {
			var err error
			group, err = r.adm.FetchOffsets(ctx, r.s.opts.Group)
			if err == nil {
				err = group.Error()
			}
			return err
		})
	}
	if err == nil && at != nil {
		err = at.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("kafka source: resolving start offsets of %v: %w", names, err)
	}
	for _, p := range ps {
		off := int64(0)
		if o, ok := earliest.Lookup(p.topic, p.partition); ok {
			off = o.Offset
		}
		if o, ok := at.Lookup(p.topic, p.partition); ok && o.Offset >= 0 {
			off = max(off, o.Offset)
		}
		if o, ok := group.Lookup(p.topic, p.partition); ok && o.Err == nil && o.At >= 0 {
			off = max(off, o.At)
		}
		out[p] = off
	}
	return out, nil
}

// bound records the end offsets of a bounded reader's partitions.
func (r *reader[T]) bound(ctx context.Context) error {
	list := r.adm.ListCommittedOffsets
	if r.s.opts.ReadUncommitted {
		list = r.adm.ListEndOffsets
	}
	ends, err := list(ctx, r.s.opts.Topics...)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return fmt.Errorf("kafka source: listing end offsets of %v: %w", r.s.opts.Topics, err)
	}
	for p, st := range r.parts {
		st.end = 0
		if o, ok := ends.Lookup(p.topic, p.partition); ok {
			st.end = o.Offset
		}
	}
	r.quiet = time.Now()
	r.step()
	return nil
}

// discover looks for new partitions of the topics; new ones this subtask
// owns are read from their earliest offset, as their records were all
// written after the source's start.
func (r *reader[T]) discover(ctx context.Context) error {
	r.discovered = time.Now()
	counts, err := topicPartitions(ctx, r.cl, r.s.opts.Topics)
	if err != nil {
		if errors.Is(err, errNoTopic) {
			return fmt.Errorf("kafka source: %w", err)
		}
		return nil // brokers busy or away: the next discovery retries
	}
	return r.assign(ctx, counts, nil, StartEarliest)
}
