package input

import (
	"fmt"
	"strings"
)

// ActionKind says what an Action obliges the shell to do.
type ActionKind uint8

const (
	// Deliver: decode records Skip to Limit-1 of the batch just stepped
	// (sequence numbers From to To-1) into the chain. With Hold the shell
	// keeps the batch and offers it again when Next names channel Ch,
	// before anything from the gate; the Protocol then delivers its rest.
	// Otherwise it releases the batch. With InFlight it also keeps a copy
	// of those records as checkpoint Checkpoint's in-flight input of Ch.
	// Duplicates counts records of the batch consumed before.
	Deliver ActionKind = iota
	// Discard: release the batch just stepped unread. Duplicates counts
	// its records consumed before (the rest were sent before a replay the
	// channel waits for).
	Discard
	// ForwardLatency: observe the latency marker just stepped and send it
	// on.
	ForwardLatency
	// Block: read nothing more from channel Ch's queue until Unblock; its
	// elements wait there.
	Block
	// Unblock: read channel Ch's queue again.
	Unblock
	// Advance: deliver input watermark Watermark to the chain.
	Advance
	// GoIdle: tell the consumers the subtask is idle.
	GoIdle
	// GoActive: tell the consumers the output watermark again: the
	// subtask is active.
	GoActive
	// Align: the alignment of checkpoint Checkpoint started. The shell
	// notes the time (the snapshot's alignment duration) and, with an
	// aligned timeout, calls AlignedTimeout(Checkpoint) when it expired.
	Align
	// Snapshot: take the synchronous part of checkpoint Checkpoint's
	// snapshot now, with the watermark state Watermarks; Counts are the
	// records consumed per channel. Then send the barrier on as Forward
	// says. A Report or a DropSnapshot of the checkpoint follows, in this
	// or a later call. If the shell cannot take the snapshot, it declines
	// the checkpoint itself, ignores the further actions of that
	// checkpoint, and calls SnapshotFailed(Checkpoint) before its next
	// Step.
	Snapshot
	// KeepQueued: copy the records From to To-1 of channel Ch, queued
	// ahead of checkpoint Checkpoint's overtaking barrier, into the
	// snapshot's in-flight input of Ch.
	KeepQueued
	// Report: checkpoint Checkpoint's snapshot is complete; report it with
	// its in-flight input. Counts are the records per channel it reflects
	// (in its state or as in-flight input): each channel's barrier
	// position, or its end.
	Report
	// DropSnapshot: checkpoint Checkpoint's snapshot will not complete
	// here; forget it and its in-flight input.
	DropSnapshot
	// Decline: report checkpoint Checkpoint as declined by this subtask,
	// for Err (which wraps ErrCatchingUp). No barrier is sent on.
	Decline
	// RequestReplay: ask the sender of channel Ch to replay its retained
	// output from record From on, for this incarnation.
	RequestReplay
	// ReplayStarted: the replay of channel Ch starts at record From (for
	// an input log that must repeat it).
	ReplayStarted
	// Finish: every channel ended; end the chain's input (the input
	// watermark is MaxWatermark already) and send End on.
	Finish
	// Fail: fail the subtask with Err (Ch is the channel at fault, -1 for
	// none). The shell calls the Protocol no more.
	Fail
)

var actionNames = [...]string{"deliver", "discard", "forward-latency", "block", "unblock", "advance",
	"go-idle", "go-active", "align", "snapshot", "keep-queued", "report", "drop-snapshot",
	"decline", "request-replay", "replay-started", "finish", "fail"}

func (k ActionKind) String() string {
	if int(k) < len(actionNames) {
		return actionNames[k]
	}
	return fmt.Sprintf("action(%d)", k)
}

// Forward says how a Snapshot sends its barrier on.
type Forward uint8

const (
	// NoBarrier: send none (the subtask finished its input).
	NoBarrier Forward = iota
	// InOrder: after everything the subtask sent before.
	InOrder
	// Ahead: ahead of the output still queued, which the snapshot keeps
	// (an unaligned barrier).
	Ahead
	// MustAlign: in order, marked MustAlign: a barrier of a checkpoint
	// every subtask aligns (a savepoint's).
	MustAlign
)

var forwardNames = [...]string{"none", "in-order", "ahead", "must-align"}

func (f Forward) String() string {
	if int(f) < len(forwardNames) {
		return forwardNames[f]
	}
	return fmt.Sprintf("forward(%d)", f)
}

// Action is a decision of the Protocol; Kind says which fields are set.
type Action struct {
	Kind       ActionKind
	Ch         int
	Checkpoint int64
	// Skip and Limit are record indexes in the batch, From and To the
	// same as sequence numbers (From is also where a replay starts).
	Skip, Limit int
	From, To    int64
	Hold        bool
	InFlight    bool
	Duplicates  int64
	Watermark   int64
	Forward     Forward
	Counts      []int64
	Watermarks  *Watermarks
	Err         error
}

func (a Action) String() string {
	var b strings.Builder
	b.WriteString(a.Kind.String())
	switch a.Kind {
	case Deliver:
		fmt.Fprintf(&b, " ch=%d records=[%d,%d)", a.Ch, a.From, a.To)
		if a.Skip > 0 {
			fmt.Fprintf(&b, " skip=%d", a.Skip)
		}
		if a.Hold {
			b.WriteString(" hold")
		}
		if a.InFlight {
			fmt.Fprintf(&b, " in-flight=%d", a.Checkpoint)
		}
		if a.Duplicates > 0 {
			fmt.Fprintf(&b, " duplicates=%d", a.Duplicates)
		}
	case Discard:
		fmt.Fprintf(&b, " ch=%d", a.Ch)
		if a.Duplicates > 0 {
			fmt.Fprintf(&b, " duplicates=%d", a.Duplicates)
		}
	case ForwardLatency, Block, Unblock:
		fmt.Fprintf(&b, " ch=%d", a.Ch)
	case Advance:
		b.WriteString(" " + formatWatermark(a.Watermark))
	case Align, DropSnapshot:
		fmt.Fprintf(&b, " %d", a.Checkpoint)
	case Snapshot:
		fmt.Fprintf(&b, " %d counts=%v forward=%v", a.Checkpoint, a.Counts, a.Forward)
		if w := a.Watermarks; w != nil {
			b.WriteString(" " + formatWatermarks(w))
		}
	case KeepQueued:
		fmt.Fprintf(&b, " %d ch=%d records=[%d,%d)", a.Checkpoint, a.Ch, a.From, a.To)
	case Report:
		fmt.Fprintf(&b, " %d counts=%v", a.Checkpoint, a.Counts)
	case Decline:
		fmt.Fprintf(&b, " %d: %v", a.Checkpoint, a.Err)
	case RequestReplay, ReplayStarted:
		fmt.Fprintf(&b, " ch=%d from=%d", a.Ch, a.From)
	case Fail:
		fmt.Fprintf(&b, " ch=%d: %v", a.Ch, a.Err)
	}
	return b.String()
}

func formatWatermark(w int64) string {
	switch w {
	case MinWatermark:
		return "min"
	case MaxWatermark:
		return "max"
	}
	return fmt.Sprint(w)
}

// formatWatermarks writes w as in=W [idle] chans=[W W(idle) W(ended)].
func formatWatermarks(w *Watermarks) string {
	var b strings.Builder
	b.WriteString("in=" + formatWatermark(w.Input))
	if w.Idle {
		b.WriteString(" idle")
	}
	b.WriteString(" chans=[")
	for c, m := range w.Channels {
		if c > 0 {
			b.WriteString(" ")
		}
		b.WriteString(formatWatermark(m.Watermark))
		if m.State != ChanActive {
			b.WriteString("(" + m.State.String() + ")")
		}
	}
	b.WriteString("]")
	return b.String()
}
