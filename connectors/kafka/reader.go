package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-stream/weir/connector"
)

const minTime = math.MinInt64

// pollWait is how long Read waits for records before it returns 0, nil, so
// that the engine can inject barriers and watermarks (connector.Reader).
const pollWait = 10 * time.Millisecond

// deletedCheck is how long a bounded reader reads nothing before it asks
// whether the records it waits for were deleted (skipDeleted).
const deletedCheck = time.Second

// tp names a topic partition.
type tp struct {
	topic     string
	partition int32
}

func (p tp) String() string { return p.topic + "/" + strconv.Itoa(int(p.partition)) }

// partition is the reader's state of one of its partitions.
type partition struct {
	next      int64 // offset of the next record to return
	end       int64 // bounded: stop here
	consuming bool
	maxTS     int64     // highest event time read
	active    time.Time // when the partition last yielded a record
}

// reader reads one subtask's partitions.
type reader[T any] struct {
	s          *source[T]
	info       connector.SubtaskInfo
	cl         *kgo.Client
	adm        *kadm.Client
	parts      map[tp]*partition
	discovered time.Time
	failed     error // sticky: a malformed record under Fail

	ts       func(T) int64 // event time, with connector.EventTimer
	ownTS    bool          // event time is the Kafka timestamp (connector.Timestamper)
	tss      []int64       // the Kafka timestamps of the last Read's records
	progress int64         // last EventTimeProgress, never decreasing

	quiet time.Time // bounded: when a Read last returned records or skipDeleted last ran

	commits chan map[tp]int64 // to the offset committer (CommitOffsets)
	wg      sync.WaitGroup    // the committer
	dlq     *kgo.Client
}

func (r *reader[T]) done() bool {
	if !r.s.opts.Bounded {
		return false
	}
	for _, st := range r.parts {
		if st.next < st.end {
			return false
		}
	}
	return true
}

// Read returns the next records of the subtask's partitions, waiting at
// most about 10 ms for them. A bounded reader returns io.EOF once every
// partition reached its end offset.
func (r *reader[T]) Read(ctx context.Context, buf []T) (int, error) {
	r.tss = r.tss[:0]
	if r.failed != nil {
		return 0, r.failed
	}
	if r.done() {
		return 0, io.EOF
	}
	if !r.s.opts.Bounded && r.s.opts.DiscoveryInterval > 0 && time.Since(r.discovered) >= r.s.opts.DiscoveryInterval {
		if err := r.discover(ctx); err != nil {
			return 0, err
		}
	}
	if len(r.parts) == 0 {
		t := time.NewTimer(pollWait)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-t.C:
		}
		return 0, nil
	}
	pctx, cancel := context.WithTimeout(ctx, pollWait)
	fs := r.cl.PollRecords(pctx, len(buf))
	cancel()
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	var ferr error
	fs.EachError(func(topic string, p int32, err error) {
		if ferr == nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			ferr = fmt.Errorf("kafka source: fetching %s/%d: %w", topic, p, err)
		}
	})
	if ferr != nil {
		return 0, ferr
	}
	k := 0
	var err error
	now := time.Now()
	fs.EachRecord(func(rec *kgo.Record) {
		if err != nil {
			return // after a failure the rest is read again from Position
		}
		p := tp{rec.Topic, rec.Partition}
		st := r.parts[p]
		if st == nil || rec.Offset < st.next || (r.s.opts.Bounded && rec.Offset >= st.end) {
			return
		}
		if rec.Attrs.IsControl() || (rec.Value == nil && r.s.opts.SkipTombstones) {
			st.next = rec.Offset + 1
			return
		}
		var zero T
		buf[k] = zero
		if derr := r.s.opts.Decode(rec, &buf[k]); derr != nil {
			buf[k] = zero
			err = r.malformed(ctx, rec, derr)
			if err == nil {
				st.next = rec.Offset + 1
			}
			return
		}
		st.next = rec.Offset + 1
		switch {
		case r.ownTS:
			t := rec.Timestamp.UnixMilli()
			r.tss = append(r.tss, t)
			st.maxTS = max(st.maxTS, t)
		case r.ts != nil:
			st.maxTS = max(st.maxTS, r.ts(buf[k]))
		}
		st.active = now
		k++
	})
	if r.s.opts.Bounded {
		if k > 0 {
			r.quiet = now
		} else if now.Sub(r.quiet) >= deletedCheck {
			r.quiet = now
			r.skipDeleted(ctx)
		}
		r.step()
	}
	if err != nil {
		if k > 0 {
			return k, nil // the error is sticky and comes with the next Read
		}
		return 0, err
	}
	return k, nil
}

// skipDeleted moves each partition of a bounded reader whose next offset
// is below the partition's log start, its records deleted by the broker's
// retention (or DeleteRecords) before they were read, on to that start,
// as the client's own consumption already has (it resumes a partition
// whose offset fell below the log start there). Without it a partition
// whose records up to its end offset were all deleted would be waited on
// forever. A failed listing is left to the next check.
func (r *reader[T]) skipDeleted(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	starts, err := r.adm.ListStartOffsets(ctx, r.s.opts.Topics...)
	if err != nil || starts.Error() != nil {
		return
	}
	for p, st := range r.parts {
		if o, ok := starts.Lookup(p.topic, p.partition); ok && o.Offset > st.next && st.next < st.end {
			st.next = min(o.Offset, st.end)
		}
	}
}

// malformed applies the policy to a record whose value did not decode. It
// returns the error that fails the reader under Fail, an error if the
// dead-letter topic cannot be written, and nil if the record was skipped.
func (r *reader[T]) malformed(ctx context.Context, rec *kgo.Record, derr error) error {
	merr := &connector.MalformedError{
		Where: fmt.Sprintf("topic %s partition %d offset %d", rec.Topic, rec.Partition, rec.Offset), Err: derr}
	if r.s.opts.OnMalformed == connector.Fail {
		r.failed = fmt.Errorf("kafka source: %w", merr)
		return r.failed
	}
	if dlq := r.s.opts.DeadLetterTopic; dlq != "" {
		if err := r.deadLetter(ctx, rec, merr); err != nil {
			return fmt.Errorf("kafka source: writing %s to dead-letter topic %q: %w", merr.Where, dlq, err)
		}
	}
	if r.s.opts.Malformed != nil {
		r.s.opts.Malformed.Add(1)
	}
	return nil
}

// deadLetter writes rec to the dead-letter topic and waits for the
// acknowledgement, so a record is never skipped without being there.
func (r *reader[T]) deadLetter(ctx context.Context, rec *kgo.Record, merr *connector.MalformedError) error {
	if r.dlq == nil {
		cl, err := kgo.NewClient(clientOpts(r.s.opts.Brokers, r.s.opts.ClientOptions,
			kgo.DefaultProduceTopic(r.s.opts.DeadLetterTopic))...)
		if err != nil {
			return err
		}
		r.dlq = cl
	}
	out := &kgo.Record{Key: rec.Key, Value: rec.Value, Timestamp: rec.Timestamp,
		Headers: append(append([]kgo.RecordHeader(nil), rec.Headers...),
			kgo.RecordHeader{Key: "weir-error", Value: []byte(merr.Err.Error())},
			kgo.RecordHeader{Key: "weir-topic", Value: []byte(rec.Topic)},
			kgo.RecordHeader{Key: "weir-partition", Value: []byte(strconv.Itoa(int(rec.Partition)))},
			kgo.RecordHeader{Key: "weir-offset", Value: []byte(strconv.FormatInt(rec.Offset, 10))})}
	return r.dlq.ProduceSync(ctx, out).FirstErr()
}

// Position returns the next offset of every partition the reader owns;
// after a malformed record failed it, that record's offset.
func (r *reader[T]) Position() connector.Position {
	offs := make(map[tp]int64, len(r.parts))
	for p, st := range r.parts {
		offs[p] = st.next
	}
	if r.s.opts.CommitOffsets {
		r.commit(offs)
	}
	return encodePosition(offs)
}

// SetEventTime implements connector.EventTimer.
func (r *reader[T]) SetEventTime(ts func(T) int64) { r.ts = ts }

// UseTimestamps implements connector.Timestamper: from now on each
// record's event time is its Kafka timestamp, and the partitions'
// progress (EventTimeProgress) follows those timestamps.
func (r *reader[T]) UseTimestamps() { r.ownTS = true }

// Timestamps implements connector.Timestamper: the Kafka timestamps, in
// epoch milliseconds, of the records the last Read returned.
func (r *reader[T]) Timestamps() []int64 { return r.tss }

// EventTimeProgress implements connector.EventTimer: the minimum over the
// partitions not idle of the highest event time read from each. A
// partition from which nothing was read yet holds it back, unless it is
// idle; when every partition is idle, the highest of all counts.
func (r *reader[T]) EventTimeProgress() int64 {
	idle := r.s.opts.PartitionIdleTimeout
	now := time.Now()
	low, high, active := int64(math.MaxInt64), int64(minTime), false
	for _, st := range r.parts {
		high = max(high, st.maxTS)
		if idle > 0 && now.Sub(st.active) >= idle {
			continue
		}
		active = true
		low = min(low, st.maxTS)
	}
	p := low
	if !active {
		p = high
	}
	r.progress = max(r.progress, p)
	return r.progress
}

// commit hands offsets to the committer goroutine, replacing offsets it
// has not taken yet.
func (r *reader[T]) commit(offs map[tp]int64) {
	if r.commits == nil {
		r.commits = make(chan map[tp]int64, 1)
		r.wg.Go(r.committer)
	}
	select {
	case <-r.commits:
	default:
	}
	r.commits <- offs
}

// committer commits offsets to the group, for monitoring only: a failed
// commit is dropped, the next checkpoint's offsets replace it. It returns
// when Close closes the channel, after committing what is left.
func (r *reader[T]) committer() {
	for offs := range r.commits {
		o := kadm.Offsets{}
		for p, off := range offs {
			o.AddOffset(p.topic, p.partition, off, -1)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = r.adm.CommitOffsets(ctx, r.s.opts.Group, o)
		cancel()
	}
}

func (r *reader[T]) Close() error {
	if r.commits != nil {
		close(r.commits)
		r.wg.Wait()
		r.commits = nil
	}
	if r.dlq != nil {
		r.dlq.Close()
	}
	r.stopConsuming()
	r.cl.Close()
	return nil
}

// stopConsuming removes every partition the reader consumes from its
// client, so that the client's Close finds nothing left to assign. The
// client assigns a partition added with AddConsumePartitions in a
// goroutine of its own, after the metadata update the call triggers. When
// that update lands during Client.Close, after Close stopped the consumer,
// franz-go (v1.22.3) still assigns the partition, which starts a fetch
// session that races with Close ending the sessions. A reader closed
// right after Open, or right after a bounded reader moved on to its next
// partition, meets that window.
func (r *reader[T]) stopConsuming() {
	consumed := map[string][]int32{}
	for p, st := range r.parts {
		if st.consuming {
			consumed[p.topic] = append(consumed[p.topic], p.partition)
			st.consuming = false
		}
	}
	if len(consumed) > 0 {
		r.cl.RemoveConsumePartitions(consumed)
	}
}

const positionVersion = 1

func sortTP(ps []tp) {
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].topic != ps[j].topic {
			return ps[i].topic < ps[j].topic
		}
		return ps[i].partition < ps[j].partition
	})
}

// encodePosition encodes offsets sorted by topic and partition, so equal
// positions have equal bytes.
func encodePosition(offs map[tp]int64) connector.Position {
	ps := make([]tp, 0, len(offs))
	for p := range offs {
		ps = append(ps, p)
	}
	sortTP(ps)
	b := []byte{positionVersion}
	b = binary.AppendUvarint(b, uint64(len(ps)))
	for _, p := range ps {
		b = binary.AppendUvarint(b, uint64(len(p.topic)))
		b = append(b, p.topic...)
		b = binary.AppendUvarint(b, uint64(p.partition))
		b = binary.AppendVarint(b, offs[p])
	}
	return b
}

func decodePosition(pos connector.Position) (map[tp]int64, error) {
	if pos == nil {
		return nil, nil
	}
	bad := func(what string) (map[tp]int64, error) {
		return nil, fmt.Errorf("kafka source: corrupt position (%s): %x", what, []byte(pos))
	}
	if len(pos) == 0 || pos[0] != positionVersion {
		return bad("version")
	}
	b := pos[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return bad("count")
	}
	b = b[k:]
	out := make(map[tp]int64, n)
	for range n {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return bad("topic")
		}
		topic := string(b[k : k+int(l)])
		b = b[k+int(l):]
		part, k := binary.Uvarint(b)
		if k <= 0 || part > math.MaxInt32 {
			return bad("partition")
		}
		b = b[k:]
		off, k := binary.Varint(b)
		if k <= 0 || off < 0 {
			return bad("offset")
		}
		b = b[k:]
		out[tp{topic, int32(part)}] = off
	}
	if len(b) != 0 {
		return bad("trailing bytes")
	}
	return out, nil
}
