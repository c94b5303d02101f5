package input

import (
	"errors"
	"fmt"
	"math"
)

// Kind is the kind of a stream element.
type Kind uint8

const (
	// Data is a batch of N records numbered from Seq on its channel.
	Data Kind = iota
	// Watermark says no record with an event time <= Time follows on the
	// channel.
	Watermark
	// Idle says the channel carries no records for now.
	Idle
	// Barrier marks checkpoint Checkpoint after Seq records of the
	// channel. An Unaligned barrier overtook the channel's queue: Seq is
	// then the number of records before its place in the queue (its
	// marker), those consumed and those still queued ahead of it.
	Barrier
	// End says the channel is finished; nothing follows but what a sender
	// restarted alone regenerates.
	End
	// Replay starts the sender's replay of its retained output, from
	// record Seq on, answering incarnation Incarnation's request.
	Replay
	// Latency is a latency marker.
	Latency
)

var kindNames = [...]string{"data", "watermark", "idle", "barrier", "end", "replay", "latency"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Element is what the shell read from one channel: a stream element
// without its records, which stay with the shell.
type Element struct {
	Kind Kind
	// Seq is the sequence number of a Data batch's first record, the
	// position of a Barrier, or where a Replay resumes.
	Seq int64
	// N is the number of records of a Data batch (at least 1).
	N int
	// Time is the watermark of a Watermark element.
	Time int64
	// Checkpoint is the checkpoint of a Barrier.
	Checkpoint int64
	// Unaligned marks a barrier that overtook its channel's queue.
	Unaligned bool
	// MustAlign marks a barrier of a checkpoint that must be aligned (a
	// savepoint's), whatever the Mode of an exactly-once job: it never
	// overtakes (it is not Unaligned), its alignment blocks channels in
	// Unaligned mode too, the aligned timeout does not switch it, and the
	// barrier is sent on marked again. Every barrier of one checkpoint
	// carries the same mark. At-least-once mode ignores it.
	MustAlign bool
	// Incarnation is the incarnation a Replay answers.
	Incarnation int64
}

func (e Element) String() string {
	switch e.Kind {
	case Data:
		return fmt.Sprintf("data seq=%d n=%d", e.Seq, e.N)
	case Watermark:
		return "watermark " + formatWatermark(e.Time)
	case Barrier:
		switch {
		case e.Unaligned:
			return fmt.Sprintf("barrier %d seq=%d unaligned", e.Checkpoint, e.Seq)
		case e.MustAlign:
			return fmt.Sprintf("barrier %d seq=%d must-align", e.Checkpoint, e.Seq)
		}
		return fmt.Sprintf("barrier %d seq=%d", e.Checkpoint, e.Seq)
	case Replay:
		return fmt.Sprintf("replay seq=%d incarnation=%d", e.Seq, e.Incarnation)
	}
	return e.Kind.String()
}

// Mode is how the job takes checkpoints.
type Mode uint8

const (
	// Aligned blocks each channel after its barrier until the barrier
	// arrived on every channel; the snapshot is taken then. With an
	// aligned timeout the alignment may switch to the unaligned way,
	// unless its barriers are MustAlign.
	Aligned Mode = iota
	// Unaligned takes the snapshot at the first (overtaking) barrier and
	// keeps the records the barriers overtook as in-flight input. A
	// checkpoint whose barriers are MustAlign is aligned as in Aligned
	// mode instead.
	Unaligned
	// AtLeastOnce counts barriers without blocking: the snapshot, taken
	// when the last barrier arrived, may reflect records after the
	// others.
	AtLeastOnce
)

var modeNames = [...]string{"aligned", "unaligned", "at-least-once"}

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("mode(%d)", m)
}

// Config describes the input of one subtask.
type Config struct {
	// Channels is the number of input channels, at least 1.
	Channels int
	// Mode is how checkpoints are taken.
	Mode Mode
}

// ErrBadConfig is wrapped by the errors of New.
var ErrBadConfig = errors.New("bad input configuration")

// The watermark bounds: a channel starts at MinWatermark; the end of
// input advances the watermark to MaxWatermark.
const (
	MinWatermark int64 = math.MinInt64
	MaxWatermark int64 = math.MaxInt64
)

// ChannelState says whether a channel's watermark counts.
type ChannelState uint8

const (
	// ChanActive channels hold the input watermark back to theirs.
	ChanActive ChannelState = iota
	// ChanIdle channels carry no records for now and do not count.
	ChanIdle
	// ChanEnded channels are finished.
	ChanEnded
)

var stateNames = [...]string{"active", "idle", "ended"}

func (s ChannelState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", s)
}

// Watermarks is the watermark state a snapshot holds, so that a subtask
// restarted from it emits the same watermarks and idleness at the same
// places as the incarnation it replaces.
type Watermarks struct {
	// Input is the input watermark delivered to the chain.
	Input int64
	// Idle says the consumers were told the subtask is idle.
	Idle bool
	// Channels holds each channel's watermark and state.
	Channels []ChannelMark
}

// ChannelMark is one channel's watermark and state.
type ChannelMark struct {
	Watermark int64
	State     ChannelState
}

// Turn is one step of a logged consumption order: consume channel Ch
// until UpTo of its records were consumed.
type Turn struct {
	Ch   int
	UpTo int64
}

var (
	// ErrRecordsMissing: a batch or a barrier came after records the
	// channel never delivered. The sender lost them: a broken invariant.
	ErrRecordsMissing = errors.New("records are missing")
	// ErrBarrierBehind: a barrier came after fewer records than were
	// consumed from its channel; the checkpoint would not be a
	// consistent cut.
	ErrBarrierBehind = errors.New("a barrier came behind consumed records")
	// ErrAfterEnd: records came after their channel ended.
	ErrAfterEnd = errors.New("records came after the end of their channel")
	// ErrCatchingUp declines a checkpoint at a subtask restarted alone
	// whose output is behind its previous incarnation's.
	ErrCatchingUp = errors.New("still catching up with the output of its previous incarnation")
	// ErrFinishedBehind: a subtask restarted alone finished its input
	// without catching up with its previous incarnation's output, so its
	// replay was not deterministic.
	ErrFinishedBehind = errors.New("finished behind the output of its previous incarnation")
)
