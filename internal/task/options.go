package task

import (
	"fmt"
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/exchange"
)

// This file holds the options a Runtime runs with: its queues and clock,
// checkpoints and restore, the subtasks it runs in cluster mode, and the
// modes of fine-grained failover (upstream backup, active standby, a
// rejoin after a lost process). What the runtime reports goes to its
// Host (host.go).

// Options tune a Runtime.
type Options struct {
	// Job names the job in errors and metrics.
	Job string
	// State, when not nil, keeps the keyed state of the subtasks in LSM
	// stores: the pebble state backend (Context.State).
	State *LSMState
	// Memory, when not nil, makes the memory state backend checkpoint
	// its tables incrementally (Context.Memory); nil: every checkpoint
	// holds the whole state.
	Memory *MemoryState
	// QueueCapacity is the number of elements (batches) each input channel
	// holds before its sender blocks. Default 8.
	QueueCapacity int
	// WatermarkInterval is how often sources emit watermarks. Default 200ms.
	WatermarkInterval time.Duration
	// BufferTimeout bounds how long a source's partly filled output buffer
	// waits before it is shipped. Default 100ms.
	BufferTimeout time.Duration
	// IdleTimeout marks a source subtask idle after it produced nothing for
	// this long, so it does not hold back watermarks. 0 disables it.
	IdleTimeout time.Duration
	// Now returns the processing time; default time.Now.
	Now func() time.Time

	// LatencyInterval is how often sources emit latency markers; 0 turns
	// latency tracking off, and a negative value emits one after every
	// batch read (full tracking).
	LatencyInterval time.Duration
	// Attempt counts the job's restarts; operators see it in Context.
	Attempt int
	// Checkpoint is how checkpoints are taken (default none).
	Checkpoint CheckpointMode
	// AlignedTimeout switches an aligned checkpoint that waited this long
	// for barriers to the unaligned way (0: never).
	AlignedTimeout time.Duration
	// Host receives the runtime's reports: snapshots, finished and failed
	// subtasks, standbys' takeovers and stops. Nil: nobody listens.
	Host Host
	// Restore holds the snapshot of each subtask to restore, from
	// checkpoint Restored.
	Restore  map[dataflow.SubtaskID][]byte
	Restored int64
	// Positions, if set, makes sources publish their position after every
	// read, for Positions (at-most-once recovery), and start at the
	// positions given here.
	Positions      map[dataflow.SubtaskID][]byte
	TrackPositions bool
	// GapMarks, with TrackPositions, are the operators' marks from the
	// failed attempts (see GapMark).
	GapMarks map[GapKey]int64
	// Inject, if set, is asked at each named point whether to fail there.
	Inject func(p Point, s dataflow.SubtaskID, checkpoint int64) bool

	// Local, if set, limits the runtime to the subtasks it accepts; the
	// others run in other processes (cluster mode). Nil runs them all.
	Local func(dataflow.SubtaskID) bool
	// Remote returns the sending end of gate channel ch of subtask to,
	// which runs in another process. Required when Local is set.
	Remote func(to dataflow.SubtaskID, ch int) exchange.Sender
	// RequestReplay, with UpstreamBackup and Local, carries a restarted
	// local subtask's replay request to sender, which runs in another
	// process; that process hands it to its runtime's Replay. Like Remote
	// it is a way to a subtask elsewhere, not a report: without it a
	// restarted subtask waits for replays that never come. It must not
	// block for long.
	RequestReplay func(sender dataflow.SubtaskID, q ReplayRequest)

	// UpstreamBackup turns on fine-grained failover inside the runtime:
	// senders retain their output until a checkpoint makes it durable at
	// the receivers, and a failed subtask does not stop the others. Its
	// failure goes to Host.Failed, its gate drops what is sent to it, and
	// the job restarts it (and whatever else it chooses) with Restart.
	UpstreamBackup bool
	// RetainLimit bounds the bytes of output each subtask retains; past
	// it the subtask drops its backup until its next barrier, and a
	// consumer that fails meanwhile cannot be replayed to (ErrBackupLost).
	// 0: no bound.
	RetainLimit int64
	// Log receives notable events (a dropped backup); may be nil.
	Log func(string)
	// ActiveStandby, with UpstreamBackup, runs an active standby of every
	// subtask that can have one (CanHaveStandby, standby.go). When the
	// primary fails its standby takes its place (Host.TakenOver). Its
	// input log is bounded by RetainLimit too.
	ActiveStandby bool

	// StandbyElsewhere, with ActiveStandby and Local, keeps the input
	// logs of the local subtasks that can have an active standby for
	// their remote standbys, in another process (ShipLog), instead of
	// running standbys here.
	StandbyElsewhere bool
	// PrimaryElsewhere, with ActiveStandby and Local, runs the local
	// subtasks as the remote standbys of primaries in another process
	// (standby_remote.go): each follows the log its primary ships to
	// LogGate and sends nothing until Promote makes it the subtask. Its
	// writers send to the subtasks' primaries wherever they run
	// (Remote), never to a local gate.
	PrimaryElsewhere bool
	// Replacement, with PrimaryElsewhere, starts standbys that replace
	// lost ones while the attempt runs, from a checkpoint it took
	// (Restored): they take their channel sequence numbers from the
	// state, as a subtask restarted alone does, not from zero as at the
	// attempt's start.
	Replacement bool
	// Rejoin starts the local subtasks as restarted incarnations of
	// subtasks a lost process ran (remote.go), from Restore, numbering
	// their incarnations above Incarnation. Delivered holds, per channel
	// out of a local source, the records its receivers hold from the lost
	// incarnation: the source sends no barrier before it caught up.
	Rejoin      bool
	Incarnation int64
	Delivered   map[dataflow.Channel]int64
}

func (o *Options) logf(format string, args ...any) {
	if o.Log != nil {
		o.Log(fmt.Sprintf(format, args...))
	}
}

func (o *Options) fill() {
	if o.QueueCapacity <= 0 {
		o.QueueCapacity = 8
	}
	if o.WatermarkInterval <= 0 {
		o.WatermarkInterval = 200 * time.Millisecond
	}
	if o.BufferTimeout <= 0 {
		o.BufferTimeout = 100 * time.Millisecond
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Host == nil {
		o.Host = NopHost{}
	}
}
