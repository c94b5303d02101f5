package task

import "fmt"

// This file is what a subtask incarnation is (its role), and the
// transitions between roles, in one place.

// roleKind is what a subtask incarnation does in its job.
type roleKind uint8

const (
	// primary: the subtask, started with its attempt (or a standby that
	// took over in its primary's runtime).
	primary roleKind = iota
	// restarted: the subtask restarted alone from a checkpoint in its
	// runtime (Runtime.Restart), while the others ran on.
	restarted
	// rejoined: the subtask restarted alone in a new share of the
	// attempt, in another process than its lost incarnation
	// (Options.Rejoin).
	rejoined
	// localStandby: an active standby in its primary's runtime, fed the
	// primary's input log and sending through the cursors it shares with
	// it.
	localStandby
	// remoteStandby: an active standby in another process than its
	// primary (Options.PrimaryElsewhere), fed the log shipped to it and
	// sending nothing until it is promoted.
	remoteStandby
	// promoted: a remote standby that took the place of its lost primary
	// (Runtime.Promote).
	promoted
)

var roleNames = [...]string{"primary", "restarted", "rejoined", "local standby", "remote standby", "promoted standby"}

func (k roleKind) String() string {
	if int(k) < len(roleNames) {
		return roleNames[k]
	}
	return fmt.Sprintf("role(%d)", k)
}

// role is a subtask incarnation's role. The runtime gives it when it
// makes the incarnation (the constructors below) and changes it only at
// a takeover (takeOver). The zero role is a primary started with its
// attempt.
type role struct {
	kind roleKind
	// late: the incarnation starts after the other subtasks of its
	// attempt, from a checkpoint, so the sequence numbers of its
	// channels are the checkpoint's, not zero. Always so for restarted
	// and rejoined incarnations, never for a primary started with its
	// attempt; a standby is late when it starts after its primary.
	late bool
}

// restartedRole is the role of a subtask restarted alone: in its
// runtime, or (rejoin) in a new share elsewhere.
func restartedRole(rejoin bool) role {
	if rejoin {
		return role{kind: rejoined, late: true}
	}
	return role{kind: restarted, late: true}
}

// standbyRole is the role of an active standby, in another process than
// its primary with remote, started after its primary with late.
func standbyRole(remote, late bool) role {
	if remote {
		return role{kind: remoteStandby, late: late}
	}
	return role{kind: localStandby, late: late}
}

// takeOver is the role a standby has once it took its primary's place:
// a local standby becomes the primary, a remote one a promoted standby.
// Any other role taking over is a broken invariant.
func (r role) takeOver() role {
	switch r.kind {
	case localStandby:
		return role{kind: primary, late: r.late}
	case remoteStandby:
		return role{kind: promoted, late: r.late}
	}
	panic(fmt.Sprintf("task: a %s took over", r.kind))
}

// standby reports whether the incarnation is an active standby.
func (r role) standby() bool { return r.kind == localStandby || r.kind == remoteStandby }

// restartedAlone reports whether the incarnation restarted while the
// subtasks around it ran on: the output cursors it shares with its
// standby restart from its checkpoint.
func (r role) restartedAlone() bool { return r.kind == restarted || r.kind == rejoined }

// regenerates reports whether the incarnation regenerates output its
// receivers may hold already and asks its senders for replays of what
// its restored state lacks: one restarted alone, or a standby promoted
// after its primary's process was lost.
func (r role) regenerates() bool { return r.restartedAlone() || r.kind == promoted }

// countsFromState reports whether the channel sequence numbers come from
// the restored snapshot.
func (r role) countsFromState() bool { return r.late }
