// Package async implements the asynchronous call operator: each record
// is handed to a call that runs off the task goroutine (a lookup in an
// external service), up to a capacity of calls at once, and the results
// come out in the records' order or as they finish.
//
// The operator owns its goroutines: workers, started as calls need them
// up to the capacity, each making one call at a time, stopped and waited
// for by Close. The task goroutine alone touches the queue of records in
// flight; workers hand results back through a channel and wake the task
// (task.Completer).
//
// A watermark takes its place in the queue of records in flight and is
// forwarded once the results of all records before it were emitted (the
// operator returns the watermark it may forward, and the task asks again
// after Complete), so no result comes out after a watermark that passed
// its record's time, and unordered results reorder only between two
// watermarks. The final watermark waits for every call. A checkpoint
// does not wait: the records in flight are the operator's state, and a
// restored operator calls again for each of them, ahead of the
// watermark the task restores.
package async

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/operator"
	"github.com/weir-stream/weir/internal/task"
)

// Node is an asynchronous call operator.
type Node[In, Out any] struct {
	// Call computes a record's result. It must return soon after its
	// context is done (the timeout passed, or the job stops).
	Call func(ctx context.Context, in In) (Out, error)
	// Capacity is the most records in flight, called or finished but not
	// yet emitted; a record beyond it waits (backpressure).
	Capacity int
	// Timeout bounds each call; 0 lets calls run until the job stops.
	Timeout time.Duration
	// OnTimeout gives the result of a record whose call timed out; nil
	// fails the job instead.
	OnTimeout func(in In) (Out, error)
	// Ordered emits results in the records' order; otherwise as they
	// finish, but never across a watermark.
	Ordered bool
	// Codec stores records in flight in snapshots.
	Codec codec.Codec[In]
}

// Redistribution: the records in flight of an old subtask go whole to
// one new subtask, which calls again for them.
func (*Node[In, Out]) Redistribution() task.Redistribution { return task.Reassigned }

func (n *Node[In, Out]) Build(ctx *task.Context, outs []any) (task.Built, error) {
	o := &op[In, Out]{node: n, out: operator.Out[Out](outs, 0), name: ctx.Operator, wake: ctx.Wake, released: dataflow.MinWatermark,
		done: make(chan *entry[In, Out], n.Capacity), calls: make(chan *entry[In, Out], n.Capacity)}
	if o.wake == nil {
		o.wake = func() {}
	}
	return task.Built{Op: o, Inputs: []any{o}}, nil
}

// entry is a record in flight, or a watermark waiting for the records
// before it (mark).
type entry[In, Out any] struct {
	mark     bool
	ts       int64 // the record's time, or the watermark
	in       In
	out      Out
	err      error
	timedOut bool
	finished bool // the call returned (the task goroutine saw it)
}

type op[In, Out any] struct {
	node *Node[In, Out]
	out  task.Collector[Out]
	name string
	wake func()

	ctx      context.Context // the workers'; cancelled by Close
	stop     context.CancelFunc
	workers  sync.WaitGroup
	started  int
	calls    chan *entry[In, Out] // to the workers
	done     chan *entry[In, Out] // from the workers
	queue    []*entry[In, Out]    // records in flight and watermarks, in arrival order
	records  int                  // the records in queue
	released int64                // the latest watermark with no record before it in queue
	restored []*entry[In, Out]    // from the snapshot, not yet called
}

// Restore adds the records in flight of an old subtask's snapshot, to be
// called again once the operator runs.
func (o *op[In, Out]) Restore(data []byte) error {
	n, k := binary.Uvarint(data)
	if k <= 0 {
		return fmt.Errorf("records in flight: %w", codec.ErrCorrupt)
	}
	data = data[k:]
	for range n {
		e := &entry[In, Out]{}
		ts, k := binary.Varint(data)
		if k <= 0 {
			return fmt.Errorf("records in flight: %w", codec.ErrCorrupt)
		}
		e.ts = ts
		m, err := o.node.Codec.Decode(data[k:], &e.in)
		if err != nil {
			return fmt.Errorf("records in flight: %w", err)
		}
		data = data[k+m:]
		o.restored = append(o.restored, e)
	}
	return nil
}

// Snapshot encodes the records in flight at once: those called, those
// finished but not emitted, and restored ones not called yet.
func (o *op[In, Out]) Snapshot(task.SnapshotOptions) (func(dst []byte) (task.Encoded, error), error) {
	all := slices.DeleteFunc(slices.Concat(o.queue, o.restored), func(e *entry[In, Out]) bool { return e.mark })
	b := binary.AppendUvarint(nil, uint64(len(all)))
	for _, e := range all {
		b = binary.AppendVarint(b, e.ts)
		b = o.node.Codec.Append(b, e.in)
	}
	return task.Taken(b), nil
}

func (o *op[In, Out]) Open(ctx *task.Context) error {
	o.ctx, o.stop = context.WithCancel(ctx.Ctx)
	if len(o.restored) > 0 {
		o.wake() // call for them from the task goroutine
	}
	return nil
}

// Close stops the workers and waits for them; a call that ignores its
// context's end holds Close up.
func (o *op[In, Out]) Close() error {
	if o.stop != nil {
		o.stop()
	}
	o.workers.Wait()
	return nil
}

func (o *op[In, Out]) Collect(ts int64, v In) {
	o.reissue()
	o.add(&entry[In, Out]{ts: ts, in: v})
}

// Complete emits the results that finished; it reports whether a
// watermark may go on now (task.Completer).
func (o *op[In, Out]) Complete() bool {
	before := o.released
	o.reissue()
	o.drain(false)
	return o.released > before
}

// Watermark queues wm behind the records in flight and returns the
// latest watermark no record in flight is before. The final watermark
// waits for every call.
func (o *op[In, Out]) Watermark(wm int64) int64 {
	o.reissue()
	if o.records == 0 {
		o.queue = o.queue[:0]
		o.released = max(o.released, wm)
		return o.released
	}
	o.queue = append(o.queue, &entry[In, Out]{mark: true, ts: wm})
	if wm == dataflow.MaxWatermark {
		for o.records > 0 {
			o.drain(true)
		}
	} else {
		o.drain(false)
	}
	return o.released
}

// EndInput waits for every call (the final watermark did).
func (o *op[In, Out]) EndInput() error {
	for o.records > 0 {
		o.drain(true)
	}
	return nil
}

// reissue calls again for the records of a restored snapshot.
func (o *op[In, Out]) reissue() {
	for len(o.restored) > 0 {
		e := o.restored[0]
		o.restored = o.restored[1:]
		o.add(e)
	}
}

// add waits for room, then calls for e.
func (o *op[In, Out]) add(e *entry[In, Out]) {
	for o.records >= o.node.Capacity {
		o.drain(true)
	}
	o.queue = append(o.queue, e)
	o.records++
	if o.started < o.records {
		o.started++
		o.workers.Add(1)
		go o.work()
	}
	o.calls <- e // never blocks: at most Capacity in flight
}

// work makes calls until Close.
func (o *op[In, Out]) work() {
	defer o.workers.Done()
	for {
		select {
		case <-o.ctx.Done():
			return
		case e := <-o.calls:
			o.call(e)
			o.done <- e // never blocks: at most Capacity in flight
			o.wake()
		}
	}
}

func (o *op[In, Out]) call(e *entry[In, Out]) {
	ctx, cancel := o.ctx, context.CancelFunc(func() {})
	if o.node.Timeout > 0 {
		ctx, cancel = context.WithTimeout(o.ctx, o.node.Timeout)
	}
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			e.err = fmt.Errorf("the call panicked: %v", r)
		}
	}()
	e.out, e.err = o.node.Call(ctx, e.in)
	if e.err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && o.ctx.Err() == nil {
		e.timedOut = true
	}
}

// drain takes the calls that finished and emits what their order allows;
// wait makes it wait for at least one, when none has finished.
func (o *op[In, Out]) drain(wait bool) {
	took := false
	for {
		select {
		case e := <-o.done:
			o.finish(e)
			took = true
			continue
		default:
		}
		if took || !wait {
			break
		}
		select {
		case e := <-o.done:
			o.finish(e)
			took = true
		case <-o.ctx.Done():
			task.Fail(fmt.Errorf("%s: %w", o.name, o.ctx.Err()))
		}
	}
	o.emit()
}

// finish settles the result of a call that returned: a timeout goes to
// OnTimeout, any other error fails the job.
func (o *op[In, Out]) finish(e *entry[In, Out]) {
	e.finished = true
	switch {
	case e.timedOut && o.node.OnTimeout != nil:
		e.out, e.err = o.node.OnTimeout(e.in)
		if e.err != nil {
			task.Fail(fmt.Errorf("%s: timeout handler: %w", o.name, e.err))
		}
	case e.timedOut:
		task.Fail(fmt.Errorf("%s: an async call timed out after %v: %w", o.name, o.node.Timeout, e.err))
	case e.err != nil:
		task.Fail(fmt.Errorf("%s: async call: %w", o.name, e.err))
	}
}

// emit sends on the results that may go, and releases the watermarks
// with no record before them: in order, the finished records at the
// head of the queue; unordered, the finished records before the first
// watermark in it.
func (o *op[In, Out]) emit() {
	kept := o.queue[:0]
	i := 0
	for ; i < len(o.queue); i++ {
		e := o.queue[i]
		switch {
		case e.mark && len(kept) == 0:
			o.released = max(o.released, e.ts)
		case e.mark:
			// a record before it is still called
		case e.finished && (len(kept) == 0 || !o.node.Ordered):
			o.records--
			o.out.Collect(e.ts, e.out)
		default:
			kept = append(kept, e)
		}
		if e.mark && len(kept) > 0 {
			break
		}
	}
	n := copy(o.queue[len(kept):], o.queue[i:])
	clear(o.queue[len(kept)+n:])
	o.queue = o.queue[:len(kept)+n]
}
