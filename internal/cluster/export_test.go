package cluster

import (
	"errors"
	"runtime"
)

// AllStacks returns the stack of every goroutine in the process (the
// coordinator's and the workers' of a test cluster), for a test that
// found a hang to say who waits on whom.
func AllStacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// Abandon stops the coordinator as a crash would, for a test: it serves
// and drives nothing more, and does not release its lease.
func (c *Coordinator) Abandon() {
	c.end(errors.New("abandoned"), "abandoned: stopping as a crash would")
	c.srv.Stop()
	c.srvWG.Wait()
	c.jobsWG.Wait()
}
