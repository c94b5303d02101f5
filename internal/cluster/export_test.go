package cluster

import "runtime"

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
