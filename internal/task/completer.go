package task

// This file lets operators that work off the task goroutine (asynchronous
// calls) hand their results back to it: the operator calls
// Context.Wake from any goroutine, and the task, between elements or
// while it waits for input, calls Complete of every Completer of its
// chain.

// Completer is an optional ability of an Operator whose work finishes on
// other goroutines. The task calls Complete on its own goroutine, soon
// after the operator called Context.Wake, to let it emit what finished;
// Complete may also be called without a Wake. Complete returns true when
// the operator would now return a higher watermark from Watermark than
// it last did (it held one back for work in flight): the task then
// delivers its input watermark to the chain again, and forwards what
// comes out.
type Completer interface {
	Complete() (watermark bool)
}

// wakeup returns the function of Context.Wake: a signal that stays set
// until the task takes it, so that wakes between two looks merge.
func (s *subtask) wakeup() func() {
	s.wake = make(chan struct{}, 1)
	return func() {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// pollCompleted lets the chain's Completers emit, if one woke the task.
func (s *subtask) pollCompleted() {
	if len(s.completers) == 0 {
		return
	}
	select {
	case <-s.wake:
		s.complete()
	default:
	}
}

func (s *subtask) complete() {
	again := false
	for _, c := range s.completers {
		again = c.Complete() || again
	}
	if again {
		s.advance(s.inWM)
	}
}
