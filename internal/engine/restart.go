package engine

import (
	"fmt"
	"time"
)

// RestartStrategy decides whether and when a failed job restarts. It is
// pure: the engine passes the time of each failure.
type RestartStrategy interface {
	// Next is called at each failure; it returns how long to wait before
	// restarting, or false to give up.
	Next(now time.Time) (time.Duration, bool)
	String() string
}

// NoRestart fails the job at its first failure.
type NoRestart struct{}

func (NoRestart) Next(time.Time) (time.Duration, bool) { return 0, false }
func (NoRestart) String() string                       { return "none" }

// FixedDelay restarts up to Attempts times, waiting Delay each time.
type FixedDelay struct {
	Attempts int
	Delay    time.Duration
	used     int
}

func (f *FixedDelay) Next(time.Time) (time.Duration, bool) {
	if f.used >= f.Attempts {
		return 0, false
	}
	f.used++
	return f.Delay, true
}

func (f *FixedDelay) String() string {
	return fmt.Sprintf("fixed-delay (%d attempts, %v)", f.Attempts, f.Delay)
}

// ExponentialBackoff restarts without limit, waiting Initial, then
// Multiplier times longer each time up to Max. After ResetAfter without a
// failure the wait falls back to Initial.
type ExponentialBackoff struct {
	Initial, Max time.Duration
	Multiplier   float64
	ResetAfter   time.Duration
	current      time.Duration
	last         time.Time
}

func (e *ExponentialBackoff) Next(now time.Time) (time.Duration, bool) {
	if e.current == 0 || (e.ResetAfter > 0 && !e.last.IsZero() && now.Sub(e.last) >= e.ResetAfter) {
		e.current = e.Initial
	} else {
		m := e.Multiplier
		if m < 1 {
			m = 2
		}
		e.current = min(time.Duration(float64(e.current)*m), e.Max)
	}
	e.last = now
	return e.current, true
}

func (e *ExponentialBackoff) String() string {
	return fmt.Sprintf("exponential-backoff (%v to %v, x%g)", e.Initial, e.Max, e.Multiplier)
}

// FailureRate restarts after Delay unless more than MaxFailures failures
// happened within Interval.
type FailureRate struct {
	MaxFailures int
	Interval    time.Duration
	Delay       time.Duration
	failures    []time.Time
}

func (f *FailureRate) Next(now time.Time) (time.Duration, bool) {
	kept := f.failures[:0]
	for _, t := range f.failures {
		if now.Sub(t) < f.Interval {
			kept = append(kept, t)
		}
	}
	f.failures = append(kept, now)
	if len(f.failures) > f.MaxFailures {
		return 0, false
	}
	return f.Delay, true
}

func (f *FailureRate) String() string {
	return fmt.Sprintf("failure-rate (%d per %v, %v)", f.MaxFailures, f.Interval, f.Delay)
}

// ParseRestart builds a strategy by name: none, fixed-delay,
// exponential-backoff or failure-rate. attempts is the attempt limit of
// fixed-delay and the failure limit of failure-rate; delay the wait (the
// first wait for exponential-backoff); maxDelay the backoff's cap; interval
// failure-rate's window.
func ParseRestart(name string, attempts int, delay, maxDelay, interval time.Duration) (RestartStrategy, error) {
	switch name {
	case "none":
		return NoRestart{}, nil
	case "fixed-delay":
		return &FixedDelay{Attempts: attempts, Delay: delay}, nil
	case "exponential-backoff":
		if maxDelay < delay {
			maxDelay = delay
		}
		return &ExponentialBackoff{Initial: delay, Max: maxDelay, Multiplier: 2, ResetAfter: 10 * maxDelay}, nil
	case "failure-rate":
		return &FailureRate{MaxFailures: attempts, Interval: interval, Delay: delay}, nil
	}
	return nil, fmt.Errorf("restart strategy must be none, fixed-delay, exponential-backoff or failure-rate, not %q", name)
}
