package task

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/determinant"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/standbylog"
)

// This file is the Runtime: it builds the gates and channels of one
// attempt, runs a goroutine per local subtask (Options.Local), and ends the attempt on the first failure, or, under upstream backup,
// hands each failure to the job (restart.go) or to the subtask's active
// standby (standby_runtime.go).

// Runtime runs one attempt of a physical plan in this process.
type Runtime struct {
	plan      *plan.Plan
	opts      Options
	gates     [][]*exchange.Gate // [vertex][subtask]
	offsets   map[*plan.PhysicalEdge]int
	edgeIndex map[*plan.PhysicalEdge]int
	metrics   [][]*Metrics               // [vertex][subtask]
	inboxes   [][]chan control           // [vertex][subtask]
	positions [][]atomic.Pointer[[]byte] // [vertex][subtask], sources only
	gaps      [][][]atomic.Int64         // [vertex][subtask][operator], with TrackPositions

	edges   []*plan.PhysicalEdge        // by edge index
	cancels [][]context.CancelCauseFunc // [vertex][subtask], of the running incarnation
	dets    [][]*determinant.Log        // [vertex][subtask]: logged consumption order, or nil

	mu       sync.Mutex
	ctx      context.Context // Run's
	cancel   context.CancelCauseFunc
	finished map[dataflow.SubtaskID]bool
	wg       sync.WaitGroup
	once     sync.Once
	first    error
	exited   map[dataflow.SubtaskID]chan struct{} // closed when the subtask's incarnation stopped
	down     map[dataflow.SubtaskID]bool          // failed, waiting for Restart (holds a wg count)
	closed   bool                                 // Run is ending; nothing restarts
	// incarnations numbers restarted subtasks, so that a replay answers
	// the request of the incarnation that asked.
	incarnations int64
	lastSent     map[dataflow.SubtaskID][][]int64 // see keepSent
	promoted     map[dataflow.SubtaskID]bool      // standbys that took their subtasks' place (Options.PrimaryElsewhere)

	// Active standby (standby.go), for the subtasks that can have one.
	logs           [][]*standbylog.Log // [vertex][subtask]
	cursors        [][][][]*cursor     // [vertex][subtask][writer][channel]
	standbyMetrics [][]*Metrics        // [vertex][subtask]
	standbys       map[dataflow.SubtaskID]*standby
	logGates       [][]*exchange.Gate // [vertex][subtask], under Options.PrimaryElsewhere

	// A live rescale (reshape.go): the one prepared, and the subtasks
	// that retired at it.
	reshape atomic.Pointer[reshape]
	retired map[dataflow.SubtaskID]bool
	// handovers, in a successor that takes its state in memory, collects
	// what the retired subtasks hand over (handover.go).
	handovers *handovers

	restoring sync.WaitGroup // subtasks started by Run that have not restored their state
	restored  chan struct{}  // closed once none has (see Restored)
	rejoined  chan struct{}  // see Rejoined
}

// New prepares a runtime for p: one gate per subtask with a channel per
// upstream sender.
func New(p *plan.Plan, opts Options) *Runtime {
	opts.fill()
	r := &Runtime{plan: p, opts: opts, offsets: map[*plan.PhysicalEdge]int{}, edgeIndex: map[*plan.PhysicalEdge]int{},
		finished: map[dataflow.SubtaskID]bool{}, exited: map[dataflow.SubtaskID]chan struct{}{}, down: map[dataflow.SubtaskID]bool{}, lastSent: map[dataflow.SubtaskID][][]int64{},
		standbys: map[dataflow.SubtaskID]*standby{}, restored: make(chan struct{})}
	if opts.Rejoin {
		r.rejoined = make(chan struct{})
	}
	r.gates = make([][]*exchange.Gate, len(p.Vertices))
	r.metrics = make([][]*Metrics, len(p.Vertices))
	for _, v := range p.Vertices {
		n := 0
		for _, e := range v.Inputs {
			r.offsets[e] = n
			r.edgeIndex[e] = len(r.edgeIndex)
			r.edges = append(r.edges, e)
			n += e.Channels()
		}
		r.gates[v.ID] = make([]*exchange.Gate, v.Parallelism)
		r.metrics[v.ID] = make([]*Metrics, v.Parallelism)
		r.inboxes = append(r.inboxes, make([]chan control, v.Parallelism))
		r.cancels = append(r.cancels, make([]context.CancelCauseFunc, v.Parallelism))
		r.dets = append(r.dets, make([]*determinant.Log, v.Parallelism))
		r.logs = append(r.logs, make([]*standbylog.Log, v.Parallelism))
		r.cursors = append(r.cursors, make([][][]*cursor, v.Parallelism))
		r.standbyMetrics = append(r.standbyMetrics, make([]*Metrics, v.Parallelism))
		hasStandby := opts.UpstreamBackup && opts.ActiveStandby && CanHaveStandby(v)
		logOrder := opts.UpstreamBackup && n > 1 && ReplayDeterministic(v, true) && len(v.Outputs) > 0
		r.positions = append(r.positions, make([]atomic.Pointer[[]byte], v.Parallelism))
		if opts.TrackPositions {
			r.gaps = append(r.gaps, r.newGapMarks(v.ID, v.Parallelism, len(v.Chain)))
		}
		for i := range v.Parallelism {
			r.metrics[v.ID][i] = NewMetrics()
			if !r.IsLocal(dataflow.SubtaskID{Vertex: v.ID, Subtask: i}) {
				continue
			}
			r.gates[v.ID][i] = exchange.NewGate(n, opts.QueueCapacity)
			if logOrder {
				r.dets[v.ID][i] = &determinant.Log{}
			}
			if hasStandby {
				r.initStandby(v, i)
			}
			if hasStandby && opts.PrimaryElsewhere {
				if r.logGates == nil {
					r.logGates = make([][]*exchange.Gate, len(p.Vertices))
				}
				if r.logGates[v.ID] == nil {
					r.logGates[v.ID] = make([]*exchange.Gate, v.Parallelism)
				}
				r.logGates[v.ID][i] = exchange.NewGate(1, opts.QueueCapacity)
				// Until a promotion its senders send to its primary; a
				// moved one's elements wait for its replay request.
				r.gates[v.ID][i].Discard()
			}
			r.inboxes[v.ID][i] = make(chan control, 256)
		}
	}
	return r
}

// Restored returns a channel closed once every subtask Run started has
// restored its state (decoded it into its operators) or stopped: when a
// restored attempt really runs.
func (r *Runtime) Restored() <-chan struct{} { return r.restored }

// QueueCapacity returns the elements each input channel holds: the credit
// a remote sender starts with.
func (r *Runtime) QueueCapacity() int { return r.opts.QueueCapacity }

// IsLocal reports whether subtask id runs in this runtime.
func (r *Runtime) IsLocal(id dataflow.SubtaskID) bool { return r.opts.Local == nil || r.opts.Local(id) }

// Gate returns the input gate of local subtask id (nil for a remote one),
// for the network transport to deliver into.
func (r *Runtime) Gate(id dataflow.SubtaskID) *exchange.Gate { return r.gates[id.Vertex][id.Subtask] }

// Metrics returns the counters of subtask i of vertex v.
func (r *Runtime) Metrics(v, i int) *Metrics { return r.metrics[v][i] }

// Plan returns the plan the runtime runs.
func (r *Runtime) Plan() *plan.Plan { return r.plan }

// Run runs every subtask until all finish (bounded input), one fails, or
// ctx is cancelled. It returns nil when all finished, the first failure
// otherwise, or ctx.Err() when cancelled. Under UpstreamBackup a failed
// subtask does not end Run: it waits for Restart. All goroutines it
// starts have exited when it returns.
func (r *Runtime) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.mu.Lock()
	r.ctx, r.cancel = ctx, cancel
	r.mu.Unlock()
	if r.opts.Rejoin {
		r.rejoin(ctx)
	}
	var pumps sync.WaitGroup // of the logs of standbys whose primaries run elsewhere
	pctx, cancelPumps := context.WithCancel(ctx)
	defer cancelPumps()
	for _, v := range r.plan.Vertices {
		for i := range v.Parallelism {
			id := dataflow.SubtaskID{Vertex: v.ID, Subtask: i}
			if !r.IsLocal(id) || r.opts.Rejoin || r.opts.PrimaryElsewhere {
				continue
			}
			s := r.newSubtask(ctx, v, i)
			s.state, s.hasState = r.opts.Restore[id]
			r.restoring.Add(1)
			s.restoredDone = sync.OnceFunc(r.restoring.Done)
			r.start(s)
		}
	}
	go func() {
		r.restoring.Wait() // every subtask calls restoredDone by the time it stops
		close(r.restored)
	}()
	for _, v := range r.plan.Vertices {
		for i, l := range r.logs[v.ID] {
			if l != nil && r.opts.PrimaryElsewhere {
				pumps.Add(1)
				go func() {
					defer pumps.Done()
					r.pump(pctx, dataflow.SubtaskID{Vertex: v.ID, Subtask: i})
				}()
			}
			if l != nil && !r.opts.StandbyElsewhere {
				state, ok := r.opts.Restore[dataflow.SubtaskID{Vertex: v.ID, Subtask: i}]
				if err := r.startStandby(dataflow.SubtaskID{Vertex: v.ID, Subtask: i}, state, ok, r.opts.Restored, r.opts.Replacement); err != nil {
					r.kill(err)
				}
			}
		}
	}
	// Failed subtasks hold a count of wg until they restart; when Run
	// ends first, the watcher gives those counts back.
	stop, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-ctx.Done():
			r.mu.Lock()
			r.closed = true
			n := len(r.down)
			clear(r.down)
			r.mu.Unlock()
			if n > 0 {
				// Add(0) racing the last Done while Wait waits is a
				// WaitGroup misuse: both reset the group, and Done
				// panics.
				r.wg.Add(-n)
			}
		case <-stop:
		}
	}()
	r.wg.Wait()
	cancelPumps()
	pumps.Wait()
	close(stop)
	<-watched
	<-r.restored
	for _, v := range r.plan.Vertices {
		for _, g := range r.gates[v.ID] {
			if g != nil {
				g.Drain()
			}
		}
	}
	if r.first != nil {
		return r.first
	}
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return nil
}

// start runs subtask s on a goroutine counted by wg.
func (r *Runtime) start(s *subtask) {
	id := s.id()
	exited := make(chan struct{})
	r.mu.Lock()
	r.exited[id] = exited
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(exited)
		if s.ready != nil {
			defer s.ready()
		}
		err := s.run()
		if s.ctx.Err() != nil && r.ctx.Err() == nil {
			err = context.Cause(s.ctx) // killed or stopped alone
		}
		r.exit(id, s, err)
	}()
}

// exit handles the end of subtask id's running incarnation s: under
// UpstreamBackup a failure hands it to its standby or takes it out until
// Restart; otherwise, and for failures a restart alone cannot cure (a
// lost backup, a task found not deterministic, a record of a key group
// the subtask does not own), it fails the attempt.
func (r *Runtime) exit(id dataflow.SubtaskID, s *subtask, err error) {
	if err == nil || r.ctx.Err() != nil {
		return
	}
	if r.opts.UpstreamBackup && !errors.Is(err, ErrBackupLost) && !errors.Is(err, ErrNotDeterministic) && !errors.Is(err, ErrKeyGroupNotOwned) {
		if !errors.Is(err, errStopped) && r.takeover(id, err) {
			return
		}
		r.keepSent(id, s.sentCounts())
		r.failed(id, err)
		return
	}
	r.once.Do(func() { r.first = err })
	r.cancel(err)
}

// kill fails the whole attempt with err, from any goroutine.
func (r *Runtime) kill(err error) {
	r.mu.Lock()
	cancel := r.cancel
	r.mu.Unlock()
	if cancel != nil {
		cancel(err)
	}
}

// Kill fails the attempt as if subtask id had crashed with err; under
// UpstreamBackup it fails that subtask alone.
func (r *Runtime) Kill(id dataflow.SubtaskID, err error) {
	f := &Failure{Task: r.plan.Vertices[id.Vertex].Name(), Subtask: id.Subtask, Err: err}
	if r.opts.UpstreamBackup {
		r.mu.Lock()
		c := r.cancels[id.Vertex][id.Subtask]
		r.mu.Unlock()
		if c != nil {
			c(f)
		}
		return
	}
	r.kill(f)
}

// Positions returns the latest position every source subtask published
// (with Options.TrackPositions).
func (r *Runtime) Positions() map[dataflow.SubtaskID][]byte {
	out := map[dataflow.SubtaskID][]byte{}
	for _, v := range r.plan.Vertices {
		for i := range v.Parallelism {
			if p := r.positions[v.ID][i].Load(); p != nil {
				out[dataflow.SubtaskID{Vertex: v.ID, Subtask: i}] = *p
			}
		}
	}
	return out
}

// markFinished notes that the incarnation of subtask id running with ctx
// finished its input, unless it was stopped or failed meanwhile: Stop
// cancels ctx under the same lock and forgets the end (Finished).
func (r *Runtime) markFinished(ctx context.Context, id dataflow.SubtaskID) {
	r.mu.Lock()
	if ctx.Err() == nil {
		r.finished[id] = true
	}
	r.mu.Unlock()
}

// chans returns the channels subtask i of e.Source uses to send on e.
func (r *Runtime) chans(e *plan.PhysicalEdge, i int) []exchange.Channel {
	off := r.offsets[e]
	gates := r.gates[e.Target.ID]
	ch := func(j, idx int) exchange.Channel {
		to := dataflow.SubtaskID{Vertex: e.Target.ID, Subtask: j}
		if !r.IsLocal(to) || r.opts.PrimaryElsewhere { // its local subtasks are remote standbys
			return exchange.Channel{Index: idx, Remote: r.opts.Remote(to, idx)}
		}
		return exchange.Channel{Gate: gates[j], Index: idx}
	}
	if e.Partitioning == plan.Forward {
		return []exchange.Channel{ch(i, off)}
	}
	out := make([]exchange.Channel, len(gates))
	for j := range gates {
		out[j] = ch(j, off+i)
	}
	return out
}

// Failure is a task failure with its location.
type Failure struct {
	Task    string
	Subtask int
	Err     error
}

func (f *Failure) Error() string {
	return fmt.Sprintf("task %q (subtask %d): %v", f.Task, f.Subtask, f.Err)
}

func (f *Failure) Unwrap() error { return f.Err }

// IsFailure reports whether err is a task failure (rather than a
// cancellation).
func IsFailure(err error) bool {
	var f *Failure
	return errors.As(err, &f)
}

// QueueFill returns how full subtask i of vertex v's input queues are.
func (r *Runtime) QueueFill(v, i int) float64 {
	if g := r.gates[v][i]; g != nil {
		return g.Fill()
	}
	return 0
}

// ChannelSource names the sender of gate channel c of subtask i of vertex
// v: its task and subtask.
func (r *Runtime) ChannelSource(v, i, c int) (task string, subtask int, ok bool) {
	id, ok := r.channelSender(v, i, c)
	if !ok {
		return "", 0, false
	}
	return r.plan.Vertices[id.Vertex].Name(), id.Subtask, true
}

// WatermarkHeldBackBy names the input whose watermark holds back subtask
// i of vertex v's, as "task [subtask n]"; empty for a source and while no
// input is active.
func (r *Runtime) WatermarkHeldBackBy(v, i int) string {
	c := r.metrics[v][i].HeldBackBy.Load()
	if c < 0 {
		return ""
	}
	name, st, ok := r.ChannelSource(v, i, int(c))
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s [subtask %d]", name, st)
}
