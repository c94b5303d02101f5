package task

// Catch calls f and returns the error f failed with through Fail or
// Failf, or nil when f returns. Any other panic propagates unchanged. It
// lets code that drives an operator outside a subtask (the test harness
// of package weirtest/harness) see the operator's failures as errors, as
// a subtask does.
func Catch(f func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			fl, ok := p.(failure)
			if !ok {
				panic(p)
			}
			err = fl.err
		}
	}()
	f()
	return nil
}
