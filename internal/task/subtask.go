package task

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/backup"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/determinant"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/input"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/standbylog"
)

// This file is one subtask's life: its fields, how it is built from its
// vertex's chain, restored from its snapshot, run and closed.

// subtask is one parallel instance of a vertex: a chain of operators run by
// one goroutine.
type subtask struct {
	rt    *Runtime
	v     *plan.Vertex
	index int
	ctx   context.Context
	tctx  Context
	ops   []Operator // chain order
	procs []ProcessingTimer
	flush []Flusher
	// completers emit work finished off the task goroutine when wake
	// is signalled (completer.go).
	completers []Completer
	wake       chan struct{}
	outs       []ChannelWriter
	source     SourceRunner
	gate       *exchange.Gate
	decode     []Decoder            // per gate channel
	inChan     []dataflow.Channel   // the channel of each gate channel
	outCh      [][]dataflow.Channel // per output writer, the channel of each of its targets

	// The input protocol of a subtask with inputs, which decides how it
	// reads them, and the shell's side of what it decided (input.go).
	in         *input.Protocol
	pending    []exchange.Element   // per channel: the rest of a batch the protocol holds (Hold)
	stash      stash                // input of other channels taken while a logged order is repeated
	taking     *frozen              // the snapshot taken, until its Report
	inflight   [][]*exchange.Buffer // per channel: its in-flight input
	overtaken  []*exchange.Buffer   // records queued ahead of the unaligned barrier stepped
	alignID    int64                // the alignment under way (Align), until its snapshot
	alignStart time.Time

	inWM  int64 // the input watermark delivered to the chain
	outWM int64 // last watermark emitted downstream
	idle  bool  // downstream was told we are idle
	// idler, when the chain has one, decides idle instead of the input
	// or the source (IdleAssigner).
	idler IdleAssigner

	inbox          chan control
	lastCheckpoint int64          // the latest snapshot taken (a source's; the protocol keeps its own)
	async          sync.WaitGroup // snapshot encoders
	snapshotSize   atomic.Int64   // bytes of the last snapshot reported, to size the next one's buffer
	finished       bool           // input ended; waiting for release
	released       bool
	retiring       bool   // its snapshot was the live rescale's: it retires (reshape.go)
	handoverWMs    []byte // its watermark section at the live rescale's barrier (handover.go)
	restored       bool   // started from a snapshot
	snap           *subtaskSnapshot
	replayed       bool // the replay injection point was passed
	startPos       []byte
	markerTurn     int

	// What this incarnation is (role.go).
	role role

	// Restore and upstream backup (replay.go).
	state         []byte // snapshot to restore
	hasState      bool
	incarnation   int64
	ready         func() // restarted: called once replays were asked for (see Restart)
	deterministic bool   // see ReplayDeterministic
	backup        *backup.Store
	lostLogged    bool
	catchUp       [][]int64 // see catchingUp
	det           *determinant.Log
	deferred      int64 // a checkpoint triggered while catching up
	// deferredHow says how the deferred checkpoint starts.
	deferredHow TriggerOptions

	// Active standby (standby.go).
	standby      *standby        // set while this instance is a standby
	log          *standbylog.Log // the input log of a primary with an active standby
	unsafe       bool            // see noteUnsafe
	dropBarriers int64           // promoted from a standby elsewhere: barriers up to it were aborted (standby_remote.go)
	replays      []control       // replay requests that reached a standby elsewhere before its promotion
	wmRestored   bool            // the watermark state came from the checkpoint (watermark.go)
	restoredDone func()          // started by Run: tells Runtime.Restored (once)
	decoding     decoding        // the batch being decoded, for errors
	held         held            // see unpollHeld
}

func (r *Runtime) newSubtask(ctx context.Context, v *plan.Vertex, i int) *subtask {
	ctx, cancel := context.WithCancelCause(ctx)
	r.mu.Lock()
	if c := r.cancels[v.ID][i]; c != nil {
		c(errStopped) // the previous incarnation's context, already done
	}
	r.cancels[v.ID][i] = cancel
	r.mu.Unlock()
	return r.makeSubtask(ctx, v, i, r.metrics[v.ID][i])
}

// makeSubtask returns subtask i of v, running in ctx and counting into m.
func (r *Runtime) makeSubtask(ctx context.Context, v *plan.Vertex, i int, m *Metrics) *subtask {
	start, end := KeyGroupRange(r.plan.MaxParallelism, v.Parallelism, i)
	s := &subtask{rt: r, v: v, index: i, ctx: ctx, gate: r.gates[v.ID][i], inWM: dataflow.MinWatermark, outWM: dataflow.MinWatermark,
		inbox: r.inboxes[v.ID][i], deterministic: ReplayDeterministic(v, r.opts.UpstreamBackup), det: r.dets[v.ID][i], log: r.logs[v.ID][i]}
	s.tctx = Context{Ctx: ctx, Job: r.opts.Job, Subtask: i, Parallelism: v.Parallelism, Attempt: r.opts.Attempt, Restored: r.opts.Restored,
		TrackLatency: r.opts.LatencyInterval != 0, Ordered: r.opts.UpstreamBackup,
		MaxParallelism: r.plan.MaxParallelism, KeyGroupStart: start, KeyGroupEnd: end,
		Now: func() int64 { return r.opts.Now().UnixMilli() }, Metrics: m, State: r.opts.State, Memory: r.opts.Memory,
		WatermarkInterval: r.opts.WatermarkInterval}
	return s
}

func (s *subtask) fail(err error) error {
	return &Failure{Task: s.v.Name(), Subtask: s.index, Err: err}
}

// run builds, runs and closes the subtask. It converts panics (Fail or an
// operator bug) into errors.
func (s *subtask) run() (err error) {
	defer func() { s.tctx.Metrics.Ended.Store(time.Now().UnixNano()) }()
	if s.restoredDone != nil {
		defer s.restoredDone()
	}
	defer s.async.Wait()
	defer func() {
		if p := recover(); p != nil {
			if f, ok := p.(failure); ok {
				err = s.located(f.err)
			} else {
				err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
			}
		}
		if cerr := s.close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil && s.ctx.Err() == nil {
			err = s.fail(err)
		}
	}()
	s.tctx.Metrics.Started.Store(time.Now().UnixNano())
	if err := s.build(); err != nil {
		return err
	}
	if err := s.restore(); err != nil {
		return err
	}
	s.startBackup()
	if err := s.startFollowing(s.tctx.Restored); err != nil {
		return err
	}
	for i := len(s.ops) - 1; i >= 0; i-- {
		if err := s.ops[i].Open(s.opCtx(i)); err != nil {
			s.ops = s.ops[i+1:] // close only what was opened
			err = s.corruptRestore(fmt.Errorf("opening %q: %w", s.v.Chain[i].Name, err))
			if errors.Is(err, codec.ErrIncompatible) {
				// Restored state of a type changed incompatibly: every
				// restart would meet it again.
				err = Permanent(err)
			}
			return err
		}
	}
	if s.restoredDone != nil {
		s.restoredDone() // operators may finish decoding their state in Open
	}
	s.openWatermark()
	s.replayInflight()
	switch {
	case s.source != nil:
		err = s.runSource()
	case s.role.standby():
		err = s.runStandby()
	default:
		err = s.runInputs()
	}
	if err != nil || s.role.standby() {
		return err // a standby that finished before its primary stopped ends here
	}
	if !s.retiring {
		err = s.waitReleased()
	}
	if s.retiring {
		s.retire()
		s.handOver()
		err = s.drainRetired()
	}
	return err
}

// replayInflight delivers the records an unaligned checkpoint stored:
// first the output its barrier overtook, then the input it overtook.
func (s *subtask) replayInflight() {
	if s.snap == nil {
		return
	}
	// In channel order, so that a restore replays the same sequence every
	// time (map order would differ from one restore to the next).
	for _, key := range slices.Sorted(maps.Keys(s.snap.outputs)) {
		bufs := s.snap.outputs[key]
		w, j := key>>16, key&0xffff
		if w >= len(s.outs) {
			Failf("restoring in-flight output: writer %d of %d", w, len(s.outs))
		}
		for _, b := range bufs {
			s.outs[w].Resend(j, b)
		}
	}
	for _, c := range slices.Sorted(maps.Keys(s.snap.inputs)) {
		bufs := s.snap.inputs[c]
		if c >= len(s.decode) {
			Failf("restoring in-flight input: channel %d of %d", c, len(s.decode))
		}
		// Restored records are state, not traffic of this attempt: they do
		// not count as received on the channel.
		for _, b := range bufs {
			if err := s.decode[c].Decode(b, 0, b.N); err != nil {
				Fail(fmt.Errorf("restoring in-flight input: %w", err))
			}
		}
	}
	s.snap = nil
}

// restore gives the chain's operators their state from the snapshot the
// runtime was given for this subtask. A subtask restarted alone then
// moves the output cursors it shares with its active standby to where it
// resumes: the positions its checkpoint holds, or the start without one.
// What its failed incarnation delivered past them may be regenerated
// differently (the barriers of aborted checkpoints), so it is not
// checked against.
func (s *subtask) restore() error {
	if s.rt.handovers != nil {
		return s.adoptState() // a live rescale's successor, in this process
	}
	if err := s.restoreState(); err != nil {
		return err
	}
	if s.role.restartedAlone() {
		for _, o := range s.outs {
			o.resetCursors()
		}
	}
	return nil
}

// restoreState restores the snapshot, if the subtask has one.
func (s *subtask) restoreState() error {
	id := dataflow.SubtaskID{Vertex: s.v.ID, Subtask: s.index}
	if pos, ok := s.rt.opts.Positions[id]; ok {
		s.startPos = pos
	}
	data, ok := s.state, s.hasState
	if !ok {
		return nil
	}
	s.restored = true
	if err := s.inject(PointRecovery, 0); err != nil {
		return err
	}
	snap, err := decodeSubtaskSnapshot(data)
	if err != nil {
		return fmt.Errorf("restoring: %w", err)
	}
	s.snap = snap
	if s.source != nil {
		s.startPos = snap.position
	}
	// The watermark state is restored on every restore, so that what is
	// late after it is what was late at the snapshot; the channel counts
	// only by an incarnation whose senders go on numbering (a late one).
	var wms *input.Watermarks
	if snap.wms != nil {
		if wms, err = s.restoreWatermarks(snap.wms); err != nil {
			return err
		}
	}
	if g, ok := s.source.(WatermarkGenerator); ok && snap.generator != nil {
		if err := g.RestoreWatermarkState(snap.generator); err != nil {
			return fmt.Errorf("restoring the watermark of source %q: %w", s.v.Head().Name, err)
		}
	}
	st := input.State{Counts: make([]int64, len(s.decode)), Watermarks: wms}
	if s.role.countsFromState() && snap.counts != nil {
		if st.Counts, err = s.restoreCounts(snap.counts, snap.controls); err != nil {
			return err
		}
	}
	if s.in != nil {
		if err := s.in.Restore(st); err != nil {
			return err
		}
	}
	for i, op := range s.ops {
		blobs, ok := snap.operators[s.v.Chain[i].ID]
		if !ok {
			continue
		}
		sn, ok := op.(Snapshotter)
		if !ok {
			return fmt.Errorf("restoring %q: the checkpoint holds state for an operator without state", s.v.Chain[i].Name)
		}
		for _, st := range blobs {
			if err := sn.Restore(st); err != nil {
				// A memory table's chain of shared files may fail its
				// checks here (state.Incremental), as a store's at Open.
				return s.corruptRestore(fmt.Errorf("restoring %q: %w", s.v.Chain[i].Name, err))
			}
		}
	}
	return nil
}

func (s *subtask) opCtx(i int) *Context {
	c := s.tctx
	c.Operator, c.UID = s.v.Chain[i].Name, s.v.Chain[i].UID
	c.Gap = s.rt.gapMark(dataflow.SubtaskID{Vertex: s.v.ID, Subtask: s.index}, i)
	return &c
}

func (s *subtask) close() error {
	var first error
	for i, op := range s.ops {
		if op == nil {
			continue // handed over (handover.go)
		}
		if err := op.Close(); err != nil && first == nil {
			first = fmt.Errorf("closing %q: %w", s.v.Chain[i].Name, err)
		}
	}
	s.ops = nil
	if s.source != nil {
		if err := s.source.Close(); err != nil && first == nil {
			first = fmt.Errorf("closing source: %w", err)
		}
		s.source = nil
	}
	return first
}

// build creates the chain from its tail to its head, so that each operator
// is built with its downstream collectors at hand.
func (s *subtask) build() error {
	v := s.v
	tail := v.Tail()
	outs := make([]any, tail.Ports)
	byPort := make([][]any, tail.Ports)
	var impls []EdgeImpl
	for _, e := range v.Outputs {
		impl := e.Impl.(EdgeImpl)
		col, w, err := impl.NewWriter(s.opCtx(len(v.Chain)-1), e.Partitioning, s.rt.chans(e, s.index))
		if err != nil {
			return fmt.Errorf("output of %q to %q: %w", tail.Name, e.To.Name, err)
		}
		s.outs = append(s.outs, w)
		if cs := s.rt.cursors[v.ID][s.index]; cs != nil {
			w.share(cs[len(s.outs)-1])
		}
		if s.role.kind == remoteStandby {
			w.mute(nil) // until Promote: its primary's output is the subtask's
		}
		var chs []dataflow.Channel
		ei := s.rt.edgeIndex[e]
		if e.Partitioning == plan.Forward {
			chs = []dataflow.Channel{{Edge: ei, From: s.index, To: s.index}}
		} else {
			for j := range e.Target.Parallelism {
				chs = append(chs, dataflow.Channel{Edge: ei, From: s.index, To: j})
			}
		}
		s.outCh = append(s.outCh, chs)
		byPort[e.Port] = append(byPort[e.Port], col)
		for len(impls) <= e.Port {
			impls = append(impls, nil)
		}
		impls[e.Port] = impl
	}
	for p, cols := range byPort {
		switch len(cols) {
		case 0:
		case 1:
			outs[p] = cols[0]
		default:
			outs[p] = impls[p].Fanout(cols)
		}
	}
	s.ops = make([]Operator, len(v.Chain))
	s.tctx.Wake = s.wakeup()
	for i := len(v.Chain) - 1; i >= 0; i-- {
		n := v.Chain[i]
		b, err := n.Impl.(NodeImpl).Build(s.opCtx(i), outs)
		if err != nil {
			return fmt.Errorf("building %q: %w", n.Name, err)
		}
		s.ops[i] = b.Op
		if pt, ok := b.Op.(ProcessingTimer); ok {
			s.procs = append(s.procs, pt)
		}
		if ia, ok := b.Op.(IdleAssigner); ok && s.idler == nil {
			s.idler = ia // built from the end: the chain's last
		}
		if f, ok := b.Op.(Flusher); ok {
			s.flush = append(s.flush, f)
		}
		if c, ok := b.Op.(Completer); ok {
			s.completers = append(s.completers, c)
		}
		if i == 0 {
			s.source = b.Source
			return s.buildInputs(b.Inputs)
		}
		e := n.Inputs[0] // the chained edge
		prev := v.Chain[i-1]
		outs = make([]any, prev.Ports)
		outs[e.Port] = b.Inputs[e.Input]
	}
	return nil
}

func (s *subtask) buildInputs(inputs []any) error {
	n := s.gate.Channels()
	s.decode = make([]Decoder, n)
	s.inChan = make([]dataflow.Channel, n)
	if s.source == nil && n > 0 {
		in, err := s.newInput(n)
		if err != nil {
			return err
		}
		s.in, s.pending = in, make([]exchange.Element, n)
	}
	for _, e := range s.v.Inputs {
		where := fmt.Sprintf("edge %q -> %q", e.From.Name, e.To.Name)
		d, err := e.Impl.(EdgeImpl).NewDecoder(inputs[e.Input], where)
		if err != nil {
			return fmt.Errorf("input of %q from %q: %w", e.To.Name, e.From.Name, err)
		}
		off := s.rt.offsets[e]
		for c := off; c < off+e.Channels(); c++ {
			s.decode[c] = d
			from := c - off
			if e.Partitioning == plan.Forward {
				from = s.index
			}
			s.inChan[c] = dataflow.Channel{Edge: s.rt.edgeIndex[e], From: from, To: s.index}
		}
	}
	return nil
}

func (s *subtask) id() dataflow.SubtaskID {
	return dataflow.SubtaskID{Vertex: s.v.ID, Subtask: s.index}
}
