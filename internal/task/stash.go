package task

import (
	"fmt"

	"github.com/weir-stream/weir/internal/exchange"
)

// A subtask that repeats a logged consumption order (determinant.go)
// reads only the channel the order names next. Meanwhile the senders of
// its other channels fill their queues and wait for room, and a sender
// that waits for room sends nothing else and serves no replay request.
// Two such subtasks that share senders can so wait on each other for
// ever: each waits for records of a sender that waits for room at the
// other. So a following subtask whose next channel holds nothing takes
// what its other channels hold into a stash of its own, in their order,
// and reads a channel's stash before its queue. Once the order is
// repeated it puts the stash back at the head of the gate's queues
// (Gate.Unpoll) and reads its gate as before.
//
// The stash is bounded by Options.RetainLimit, as the output retained
// for upstream backup is: past it the subtask fails with ErrBackupLost,
// and the job falls back to a global rollback rather than wait on a
// sender that may be waiting on it.

// stash is the input a following subtask took from its other channels.
type stash struct {
	following bool                 // the gate is watched (Gate.Watch)
	chans     [][]exchange.Element // per channel, oldest first
	n         int                  // elements stashed
	bytes     int64                // bytes of the data stashed
}

// follow starts the watch of a subtask that repeats a logged order: it
// wakes for an element sent on any channel, blocked or not.
func (s *subtask) follow() {
	s.stash.following = true
	s.gate.Watch(true)
}

// fromStash returns the oldest element stashed for channel ch.
func (s *subtask) fromStash(ch int) (exchange.Element, bool) {
	if s.stash.n == 0 || len(s.stash.chans[ch]) == 0 {
		return exchange.Element{}, false
	}
	q := s.stash.chans[ch]
	e := q[0]
	q[0] = exchange.Element{}
	s.stash.chans[ch] = q[1:]
	s.stash.n--
	if e.Buf != nil {
		s.stash.bytes -= int64(e.Buf.Size())
	}
	return e, true
}

// stashOthers takes into the stash what every channel but ch holds, when
// the subtask follows a logged order and finds nothing on ch, the channel
// it names next.
func (s *subtask) stashOthers(ch int) error {
	if !s.stash.following {
		return nil
	}
	if s.stash.chans == nil {
		s.stash.chans = make([][]exchange.Element, s.gate.Channels())
	}
	limit := s.rt.opts.RetainLimit
	for c := range s.stash.chans {
		if c == ch {
			continue
		}
		for {
			e, ok := s.gate.PollChannel(c)
			if !ok {
				break
			}
			s.stash.chans[c] = append(s.stash.chans[c], e)
			s.stash.n++
			if e.Buf != nil {
				s.stash.bytes += int64(e.Buf.Size())
			}
			if limit > 0 && s.stash.bytes > limit {
				return fmt.Errorf("repeating its logged input order, it took %d bytes of input from its other channels while it waited for records from %s, more than the %d bytes it may hold: %w",
					s.stash.bytes, s.chanName(ch), limit, ErrBackupLost)
			}
		}
	}
	return nil
}

// unstash ends the watch and puts the stash back at the head of the
// gate's queues, in its order: when the logged order was repeated, and
// when the subtask stops (an active standby reads the gate after the
// input its primary logged).
func (s *subtask) unstash() {
	if !s.stash.following {
		return
	}
	s.stash.following = false
	s.gate.Watch(false)
	for c, q := range s.stash.chans {
		for i := len(q) - 1; i >= 0; i-- {
			s.gate.Unpoll(c, q[i])
		}
	}
	s.stash = stash{}
}
