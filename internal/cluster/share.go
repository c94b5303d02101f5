package cluster

import "github.com/weir-stream/weir/internal/dataflow"

// share is one worker's part of an attempt, with the data plane endpoint
// and command routing key it runs under.
type share struct {
	key   string
	w     *workerConn
	ended bool          // its end was reported, or its worker lost
	lost  bool          // its worker was lost
	done  chan struct{} // closed when it ended
	live  bool          // deployed, so commands reach it
	// standbys: a standby share, which runs remote active standbys
	// (active_standby.go), and subtasks only once they took their
	// primaries' place.
	standbys bool
	// dismissed: a standby share cancelled because every share that runs
	// subtasks ended (dismissStandbysLocked); its end is no failure.
	dismissed bool
	// ships: its subtasks that can have an active standby keep input
	// logs to ship to their standbys (it was deployed with active
	// standbys, not as a standby share).
	ships bool
	// stopping counts the STOP commands sent to it per subtask that it
	// has not answered (Stopped): an end it reports meanwhile is the
	// stopped incarnation's (see Stop).
	stopping map[dataflow.SubtaskID]int
	// A live rescale (reshape.go): successor says the share runs subtasks
	// of a rescale's cone, in extraSlots slots it took for them; a share
	// a rescale moved subtasks away from keeps fixedSlots.
	successor  bool
	extraSlots int
	slotsFixed bool
	fixedSlots int
}

// endEvent is the end of a share, or with a nil share a failure of the
// attempt as a whole.
type endEvent struct {
	sh  *share
	err error
}

// slotsOnLocked counts the slots share sh holds: the distinct subtask
// indexes placed there.
func (x *remoteExecutor) slotsOnLocked(sh *share) int {
	switch {
	case sh.successor:
		return sh.extraSlots
	case sh.slotsFixed:
		return sh.fixedSlots
	}
	idx := map[int]bool{}
	for id, s := range x.where {
		if s == sh {
			idx[id.Subtask] = true
		}
	}
	return len(idx)
}
