package generator

import (
	"context"
	"time"
)

// maxWait is the longest a throttled Read blocks: the connector contract
// asks readers with no data to return within about 10 ms.
const maxWait = 10 * time.Millisecond

// limiter is a token bucket: tokens accrue at rate per second up to burst,
// and a Read may yield as many records as there are whole tokens.
type limiter struct {
	rate, burst, tokens float64
	last                time.Time

	now  func() time.Time                                 // the clock, replaced in tests
	wait func(ctx context.Context, d time.Duration) error // blocks for d, replaced in tests
}

func newLimiter(rate float64) *limiter {
	l := &limiter{rate: rate, burst: max(1, rate*maxWait.Seconds()), tokens: 1, now: time.Now, wait: sleep}
	l.last = l.now()
	return l
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *limiter) refill() {
	now := l.now()
	if d := now.Sub(l.last); d > 0 {
		l.tokens = min(l.burst, l.tokens+d.Seconds()*l.rate)
	}
	l.last = now
}

// take returns how many of want records may be yielded now. If none may, it
// waits for the next token, but no longer than maxWait, and may return 0.
func (l *limiter) take(ctx context.Context, want int) (int, error) {
	l.refill()
	if l.tokens < 1 {
		d := time.Duration((1 - l.tokens) / l.rate * float64(time.Second))
		if err := l.wait(ctx, min(max(d, time.Microsecond), maxWait)); err != nil {
			return 0, err
		}
		l.refill()
	}
	n := want
	if l.tokens < float64(want) {
		n = int(l.tokens)
	}
	l.tokens -= float64(n)
	return n, nil
}
