package task

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/backup"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/plan"
)

// This file is the typed ends of a channel. A Writer partitions a
// chain's records, encodes them into batches per target channel,
// numbers them and sends control elements, retaining what it sends
// under upstream backup and delivering through the cursors it shares
// with an active standby; a Decoder turns a received batch back into
// records for the chain.

// ChannelWriter is the control side of the records leaving a task on one
// edge: Flush ships partly filled buffers; Emit flushes and then sends a
// control element to every channel of the edge.
type ChannelWriter interface {
	Flush()
	Emit(e exchange.Element)
	// Sent returns the number of records written to each channel so far.
	Sent() []int64
	// EmitPriority sends barrier e ahead of everything queued, without
	// shipping the partly filled buffers first (unaligned checkpoints).
	EmitPriority(e exchange.Element)
	// Pending returns copies of the partly filled buffers, per channel
	// (nil where empty): records the barrier overtook.
	Pending() []*exchange.Buffer
	// Resend sends a buffer restored from a checkpoint on channel j.
	Resend(j int, b *exchange.Buffer)
	// EmitOne ships channel j's buffer, then sends e on channel j only.
	EmitOne(j int, e exchange.Element)
	// Channels returns the number of channels.
	Channels() int
	// Replay sends channel j's retained output a restarted receiver
	// needs, which holds the records before from: a Replay element
	// naming the receiver's incarnation, then the retained elements. With fresh, this sender restarted too and
	// regenerated its output nondeterministically, so it replays all it
	// retained and the receiver resumes at its first record instead.
	Replay(j int, from, incarnation int64, fresh bool) error

	// Refresh ships channel j's buffer, then sends control element e on
	// it outside the numbered stream: neither counted nor retained nor
	// deduplicated against an active standby (a watermark or idleness a
	// restarted receiver must learn after its replay).
	Refresh(j int, e exchange.Element)

	// retain makes the writer keep its output in b, as writer w of its
	// subtask, from the records sent so far.
	retain(b *backup.Store, w int)
	// restoreSent sets the records sent per channel before a restore, so
	// that sequence numbers continue where the checkpoint left them.
	restoreSent(n []int64)
	// controls returns the control elements sent per channel (see share);
	// restoreControls sets them from a checkpoint.
	controls() []int64
	restoreControls(n []int64)
	// share makes the writer send through cursors, one per channel, that
	// it shares with the writer of its subtask's active standby;
	// resetCursors moves them to where this writer stands.
	share(cursors []*cursor)
	resetCursors()
	// mute makes the writer hold back what it sends on channel j before
	// record from[j] (a data batch that ends there, a control element
	// before it), and, with nil, everything: an active standby's output in
	// another process than its primary's (standby_remote.go). sendFrom
	// sets from and sends the retained output from there on (from all of
	// it where from[j] < 0).
	mute(from []int64)
	sendFrom(from []int64) error
	// setMetrics makes the writer count into m.
	setMetrics(m *Metrics)
	// reroute makes the writer send on chans from now on, numbering each
	// channel's records from zero (a live rescale, reshape.go): it ships
	// what it buffered to the old channels first and, with endOld, ends
	// them.
	reroute(chans []exchange.Channel, endOld bool)
}

// Writer encodes records of type T into per-channel buffers and ships a
// buffer when it is full. It implements Collector[T] and ChannelWriter.
// A blocked send (backpressure) blocks Collect; cancellation aborts the task
// through Fail.
type Writer[T any] struct {
	ctx     context.Context
	codec   codec.Codec[T]
	part    plan.Partitioning
	hash    func(T) uint64
	maxPar  int
	chans   []exchange.Channel
	bufs    []*exchange.Buffer
	prevTS  []int64
	rr      int
	metrics *Metrics
	sent    []int64
	backup  *backup.Store // nil unless output is retained (upstream backup)
	index   int           // this writer's index in its subtask, for backup
	ctl     []int64       // control elements sent per channel (in the numbered stream)
	cursors []*cursor     // shared with an active standby's writer, or nil
	muted   bool          // see mute
	from    []int64       // see mute
	values  valueBatches[T]
}

// NewWriter returns a writer sending on chans (one per target subtask, or
// one for Forward). hash is the key hash for Hash partitioning.
func NewWriter[T any](ctx *Context, c codec.Codec[T], part plan.Partitioning, hash func(T) uint64, chans []exchange.Channel) *Writer[T] {
	w := &Writer[T]{ctx: ctx.Ctx, codec: c, part: part, hash: hash, maxPar: ctx.MaxParallelism,
		chans: chans, bufs: make([]*exchange.Buffer, len(chans)), prevTS: make([]int64, len(chans)), metrics: ctx.Metrics,
		sent: make([]int64, len(chans)), ctl: make([]int64, len(chans))}
	if part == plan.Rebalance {
		w.rr = ctx.Subtask % len(chans) // spread the first records of parallel senders
	}
	w.values.init(c, chans)
	for i := range w.bufs {
		w.bufs[i] = w.values.newBuffer(i)
	}
	return w
}

// Collect encodes v for its target channel.
func (w *Writer[T]) Collect(ts int64, v T) {
	switch w.part {
	case plan.Forward:
		w.append(0, ts, v)
	case plan.Hash:
		kg := KeyGroup(w.hash(v), w.maxPar)
		w.append(SubtaskForKeyGroup(w.maxPar, len(w.chans), kg), ts, v)
	case plan.Rebalance:
		i := w.rr
		if w.rr++; w.rr == len(w.chans) {
			w.rr = 0
		}
		w.append(i, ts, v)
	case plan.Broadcast:
		for i := range w.chans {
			w.append(i, ts, v)
		}
	}
}

func (w *Writer[T]) append(i int, ts int64, v T) {
	b := w.bufs[i]
	if vb := w.values.open[i]; vb != nil {
		vb.vals = append(vb.vals, v)
		vb.ts = append(vb.ts, ts)
		if b.N++; b.N >= w.values.batchLen {
			w.ship(i)
		}
		return
	}
	b.B = binary.AppendVarint(b.B, ts-w.prevTS[i])
	w.prevTS[i] = ts
	b.B = w.codec.Append(b.B, v)
	b.N++
	if len(b.B) >= exchange.BufferSize {
		w.ship(i)
	}
}

func (w *Writer[T]) ship(i int) {
	b := w.bufs[i]
	if b.N == 0 {
		return
	}
	// The buffer leaves the writer before the send, which may fail the
	// task while it waits for room: its records count as sent (sendData)
	// and must not count again as buffered (Sent).
	w.values.seal(i)
	w.bufs[i] = w.values.newBuffer(i)
	w.prevTS[i] = 0
	w.sendData(i, b)
}

// sendData numbers b's records on channel i and sends it.
func (w *Writer[T]) sendData(i int, b *exchange.Buffer) {
	e := exchange.Element{Kind: exchange.Data, Buf: b, Seq: w.sent[i]}
	at := w.sent[i] + w.ctl[i]
	w.sent[i] += int64(b.N)
	if w.backup != nil {
		w.backup.Keep(w.index, i, e)
	}
	w.send(i, e, at, int64(b.N))
}

// sendControl sends control element e on channel i, after the records
// sent so far (its Seq), retaining it. Latency markers are not part of
// the numbered stream.
func (w *Writer[T]) sendControl(i int, e exchange.Element) {
	e.Seq = w.sent[i]
	if w.backup != nil {
		w.backup.Keep(w.index, i, e)
	}
	if e.Kind == exchange.Latency {
		w.deliver(i, e)
		return
	}
	at := w.sent[i] + w.ctl[i]
	w.ctl[i]++
	w.send(i, e, at, 1)
}

// send delivers e, which covers positions [at, at+n) of channel i's
// stream (records and control elements counted together), unless an
// active standby sharing the channel's cursor delivered them first;
// positions already delivered are the receiver's to drop (records, by
// sequence number) or never reach it (control elements, which are never
// cut).
func (w *Writer[T]) send(i int, e exchange.Element, at, n int64) {
	if w.cursors == nil {
		w.deliver(i, e)
		return
	}
	c := w.cursors[i]
	c.mu.Lock()
	if at+n <= c.pos {
		err := c.check(at, n, e)
		c.mu.Unlock()
		if e.Kind == exchange.Data {
			exchange.PutBuffer(e.Buf) // kept if the backup retains it
		}
		if err != nil {
			Fail(fmt.Errorf("%w: the output of its primary and of its active standby to channel %d differ, %v; make it deterministic or run it without --active-standby", ErrNotDeterministic, i, err))
		}
		return
	}
	if at > c.pos {
		c.mu.Unlock()
		Failf("output channel %d: position %d is past the %d its active standby pair delivered", i, at, c.pos)
	}
	// The cursor moves before the send, which holds the lock while it
	// waits for room, so that the pair's elements reach the receiver in
	// position order. A send that fails did not deliver (this instance
	// was stopped while it waited): the cursor moves back, and the
	// positions are the pair's to deliver, or a takeover would leave a
	// gap.
	pos, n0, slot := c.pos, c.n, c.marks[c.n%len(c.marks)]
	if e.Kind != exchange.Data {
		c.record(at, e)
	}
	c.pos = at + n
	err := w.tryDeliver(i, e)
	if err != nil {
		c.pos, c.n, c.marks[n0%len(c.marks)] = pos, n0, slot
	}
	c.mu.Unlock()
	if err != nil {
		Fail(err)
	}
}

// deliver sends e on channel i; a failed send fails the task.
func (w *Writer[T]) deliver(i int, e exchange.Element) {
	if err := w.tryDeliver(i, e); err != nil {
		Fail(err)
	}
}

// tryDeliver sends e on channel i, unless mute holds it back. An error
// (the task's context ended while it waited for room) means e was not
// sent.
func (w *Writer[T]) tryDeliver(i int, e exchange.Element) error {
	if w.muted && w.holds(i, e) {
		if e.Kind == exchange.Data {
			exchange.PutBuffer(e.Buf) // kept if the backup retains it
		}
		return nil
	}
	if e.Kind == exchange.Data {
		w.metrics.RecordsOut.Add(int64(e.Buf.N))
		w.metrics.BytesOut.Add(int64(sentBytes(e.Buf)))
	}
	blocked, err := w.chans[i].SendTimed(w.ctx, e)
	if blocked > 0 {
		w.metrics.Backpressured.Add(int64(blocked))
	}
	return err
}

// Flush ships every non-empty buffer.
func (w *Writer[T]) Flush() {
	for i := range w.bufs {
		w.ship(i)
	}
}

// EmitPriority sends e ahead of the queued elements of every channel.
func (w *Writer[T]) EmitPriority(e exchange.Element) {
	for _, c := range w.chans {
		c.SendPriority(e)
	}
}

// Pending returns copies of the partly filled buffers.
func (w *Writer[T]) Pending() []*exchange.Buffer {
	out := make([]*exchange.Buffer, len(w.bufs))
	for i, b := range w.bufs {
		if b.N > 0 {
			out[i] = b.Copy()
		}
	}
	return out
}

// Resend ships a restored buffer on channel j, before anything else.
func (w *Writer[T]) Resend(j int, b *exchange.Buffer) {
	nb := exchange.GetBuffer()
	nb.B = append(nb.B, b.Bytes()...)
	nb.N = b.N
	w.sendData(j, nb)
}

// EmitOne ships channel j's buffer, then sends e on it.
func (w *Writer[T]) EmitOne(j int, e exchange.Element) {
	w.ship(j)
	w.sendControl(j, e)
}

// Refresh ships channel j's buffer, then sends e outside the numbered stream.
func (w *Writer[T]) Refresh(j int, e exchange.Element) {
	w.ship(j)
	e.Seq = w.sent[j]
	w.deliver(j, e)
}

// Replay sends channel j's retained output from record from on.
func (w *Writer[T]) Replay(j int, from, incarnation int64, fresh bool) error {
	if w.backup == nil {
		return fmt.Errorf("replay from record %d requested, no output retained: %w", from, ErrBackupLost)
	}
	if base, ok := w.backup.Base(w.index, j); fresh && ok && base >= 0 {
		from = base
	}
	elems, err := w.backup.Since(w.index, j, from)
	if err != nil {
		return err
	}
	if err := w.chans[j].Replay(w.ctx, exchange.Element{Kind: exchange.Replay, Seq: from, Checkpoint: incarnation}); err != nil {
		Fail(err)
	}
	for _, e := range elems {
		if e.Buf != nil {
			e.Buf.Retain() // the receiver's, besides the backup's
		}
		if err := w.chans[j].Replay(w.ctx, e); err != nil {
			Fail(err)
		}
	}
	return nil
}

func (w *Writer[T]) retain(b *backup.Store, index int) {
	w.backup, w.index = b, index
	for i := range w.chans {
		b.Start(index, i, w.sent[i])
	}
}

func (w *Writer[T]) restoreSent(n []int64) {
	copy(w.sent, n)
	if w.part == plan.Rebalance {
		// Round robin continues where the checkpoint left it, so that a
		// deterministic task sends the same records to the same channels.
		var total int64
		for _, c := range n {
			total += c
		}
		w.rr = int((int64(w.rr) + total) % int64(len(w.chans)))
	}
}

func (w *Writer[T]) controls() []int64 { return append([]int64(nil), w.ctl...) }

func (w *Writer[T]) restoreControls(n []int64) { copy(w.ctl, n) }

func (w *Writer[T]) share(c []*cursor) { w.cursors = c }

func (w *Writer[T]) resetCursors() {
	for i, c := range w.cursors {
		c.mu.Lock()
		c.pos = w.sent[i] + w.ctl[i]
		c.n = 0 // what was delivered past it may be regenerated differently
		c.mu.Unlock()
	}
}

func (w *Writer[T]) setMetrics(m *Metrics) { w.metrics = m }

func (w *Writer[T]) reroute(chans []exchange.Channel, endOld bool) {
	w.Flush()
	if endOld {
		for i := range w.chans {
			w.deliver(i, exchange.Element{Kind: exchange.End, Seq: w.sent[i]})
		}
	}
	for _, b := range w.bufs {
		exchange.PutBuffer(b)
	}
	n := len(chans)
	w.chans, w.bufs, w.prevTS, w.sent, w.ctl = chans, make([]*exchange.Buffer, n), make([]int64, n), make([]int64, n), make([]int64, n)
	w.values.route(chans)
	for i := range w.bufs {
		w.bufs[i] = w.values.newBuffer(i)
	}
	w.rr %= n
}

func (w *Writer[T]) mute(from []int64) { w.muted, w.from = true, from }

// holds reports whether e, for channel i, is held back by mute.
func (w *Writer[T]) holds(i int, e exchange.Element) bool {
	if w.from == nil {
		return true
	}
	if e.Kind == exchange.Data {
		return e.Seq+int64(e.Buf.N) <= w.from[i]
	}
	return e.Seq < w.from[i]
}

func (w *Writer[T]) sendFrom(from []int64) error {
	w.mute(from)
	if w.backup == nil {
		return nil
	}
	for j := range w.chans {
		if base, ok := w.backup.Base(w.index, j); from[j] < 0 && ok {
			from[j] = base // unknown: all it retained
		}
		elems, err := w.backup.Since(w.index, j, from[j])
		if err != nil {
			return err
		}
		for _, e := range elems {
			if e.Buf != nil {
				e.Buf.Retain() // the receiver's, besides the backup's
			}
			w.deliver(j, e)
		}
	}
	return nil
}

// Channels returns the number of channels.
func (w *Writer[T]) Channels() int { return len(w.chans) }

// Sent returns the records written per channel, shipped or still in the
// channel's buffer.
func (w *Writer[T]) Sent() []int64 {
	out := make([]int64, len(w.sent))
	for i, n := range w.sent {
		out[i] = n + int64(w.bufs[i].N)
	}
	return out
}

// Emit flushes, then sends e on every channel.
func (w *Writer[T]) Emit(e exchange.Element) {
	for i := range w.chans {
		w.ship(i)
		w.sendControl(i, e)
	}
}

// Decoder decodes a data buffer and pushes its records into the chain.
// Decode pushes records from up to (not including) to, counted from 0 in
// the batch: the ones before from a receiver already holds, the ones from
// to on it takes later (deterministic replay).
type Decoder interface {
	Decode(b *exchange.Buffer, from, to int) error
}

type decoder[T any] struct {
	codec  codec.Codec[T]
	target Collector[T]
	v      T
	zero   T
	where  string
}

// NewDecoder returns a decoder feeding target; where names the edge in
// error messages.
func NewDecoder[T any](c codec.Codec[T], target Collector[T], where string) Decoder {
	return &decoder[T]{codec: c, target: target, where: where}
}

func (d *decoder[T]) Decode(b *exchange.Buffer, from, to int) error {
	if vb, ok := b.Vals.(*valueBatch[T]); ok {
		for i := from; i < min(to, len(vb.vals)); i++ {
			d.target.Collect(vb.ts[i], vb.vals[i])
		}
		return nil
	}
	src := b.Bytes()
	var ts int64
	for i := 0; i < to; i++ {
		delta, n := binary.Varint(src)
		if n <= 0 {
			return fmt.Errorf("decoding record %d of a batch on %s: bad timestamp: %w", i, d.where, codec.ErrCorrupt)
		}
		ts += delta
		src = src[n:]
		d.v = d.zero
		n, err := d.codec.Decode(src, &d.v)
		if err != nil {
			return fmt.Errorf("decoding record %d of a batch on %s: %w", i, d.where, err)
		}
		src = src[n:]
		if i >= from {
			d.target.Collect(ts, d.v)
		}
	}
	return nil
}

// Fanout sends each record to several collectors.
type Fanout[T any] []Collector[T]

// Collect passes the record to every collector in order.
func (f Fanout[T]) Collect(ts int64, v T) {
	for _, c := range f {
		c.Collect(ts, v)
	}
}

// Discard drops records; it stands in for an output nobody consumes.
type Discard[T any] struct{}

// Collect drops the record.
func (Discard[T]) Collect(int64, T) {}
