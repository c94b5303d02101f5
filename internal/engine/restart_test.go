package engine

import (
	"testing"
	"time"
)

func TestFixedDelayGivesUpAfterAttempts(t *testing.T) {
	s := &FixedDelay{Attempts: 2, Delay: time.Second}
	now := time.Unix(0, 0)
	for i := range 2 {
		if d, ok := s.Next(now); !ok || d != time.Second {
			t.Fatalf("restart %d: got %v %v, want 1s true", i, d, ok)
		}
	}
	if _, ok := s.Next(now); ok {
		t.Fatal("third restart allowed")
	}
}

func TestExponentialBackoffDoublesUpToMaxAndResets(t *testing.T) {
	s := &ExponentialBackoff{Initial: 100 * time.Millisecond, Max: time.Second, Multiplier: 2, ResetAfter: time.Minute}
	now := time.Unix(0, 0)
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, w := range want {
		d, ok := s.Next(now)
		if !ok || d != w*time.Millisecond {
			t.Fatalf("failure %d: got %v, want %v", i, d, w*time.Millisecond)
		}
		now = now.Add(time.Second)
	}
	if d, _ := s.Next(now.Add(2 * time.Minute)); d != 100*time.Millisecond {
		t.Fatalf("after a quiet spell: got %v, want the initial 100ms", d)
	}
}

func TestFailureRateCountsWithinInterval(t *testing.T) {
	s := &FailureRate{MaxFailures: 2, Interval: time.Minute, Delay: time.Second}
	t0 := time.Unix(0, 0)
	for i, at := range []time.Duration{0, 10 * time.Second} {
		if _, ok := s.Next(t0.Add(at)); !ok {
			t.Fatalf("failure %d refused", i)
		}
	}
	if _, ok := s.Next(t0.Add(20 * time.Second)); ok {
		t.Fatal("a third failure within the minute was allowed")
	}
	s = &FailureRate{MaxFailures: 2, Interval: time.Minute, Delay: time.Second}
	for i, at := range []time.Duration{0, 10 * time.Second, 75 * time.Second} {
		if _, ok := s.Next(t0.Add(at)); !ok {
			t.Fatalf("failure %d refused although the first left the window", i)
		}
	}
}

func TestParseRestart(t *testing.T) {
	for _, name := range []string{"none", "fixed-delay", "exponential-backoff", "failure-rate"} {
		if _, err := ParseRestart(name, 3, time.Second, time.Minute, time.Minute); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := ParseRestart("sometimes", 3, time.Second, 0, 0); err == nil {
		t.Error("unknown strategy accepted")
	}
	if _, ok := (NoRestart{}).Next(time.Now()); ok {
		t.Error("none restarted")
	}
}

func TestInjectorIsDeterministicPerSeed(t *testing.T) {
	plan := func(seed uint64) []string {
		in := NewInjector(5, seed)
		var out []string
		for i := range 5 {
			d, _ := in.arm(i > 0, true)
			out = append(out, func() string {
				if in.armed.point != 0 {
					return in.armed.point.String()
				}
				return "random " + d.String()
			}())
		}
		return out
	}
	a, b, c := plan(1), plan(1), plan(2)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed 1 gave %v then %v", a, b)
		}
	}
	same := true
	for i := range a {
		same = same && a[i] == c[i]
	}
	if same {
		t.Fatalf("seeds 1 and 2 gave the same schedule %v", a)
	}
}

func TestInjectorAtArmsOneKillAtItsMoment(t *testing.T) {
	in := NewInjectorAt(5*time.Second, 1)
	for attempt := range 2 { // an attempt that ends before the kill arms it again
		d, ok := in.arm(attempt > 0, true)
		if !ok || d != 5*time.Second || in.armed.point != 0 {
			t.Fatalf("attempt %d armed %v %v %+v, want a random-moment kill at 5s", attempt, d, ok, in.armed)
		}
	}
	if !in.waitsForCheckpoint() {
		t.Fatal("the kill does not wait for a completed checkpoint")
	}
	if !in.fireRandom() || in.Injected() != 1 {
		t.Fatalf("the armed kill did not fire: injected %d", in.Injected())
	}
	if _, ok := in.arm(true, true); ok {
		t.Fatal("a second kill was armed")
	}
	if NewInjector(1, 1).waitsForCheckpoint() {
		t.Fatal("a random schedule waits for checkpoints")
	}
}

func TestReportKeepsBoundedHistoryAndTotals(t *testing.T) {
	var r Report
	for i := range CheckpointHistory + 5 {
		status := "completed"
		if i%2 == 1 {
			status = "aborted"
		}
		r.add(CheckpointStats{ID: int64(i + 1), Status: status})
	}
	if len(r.Checkpoints) != CheckpointHistory || r.Checkpoints[0].ID != 6 {
		t.Fatalf("history of %d starting at %d, want %d starting at 6", len(r.Checkpoints), r.Checkpoints[0].ID, CheckpointHistory)
	}
	if r.Completed+r.Aborted != CheckpointHistory+5 || r.LastCompleted() != CheckpointHistory+5 {
		t.Fatalf("totals %d+%d, last completed %d", r.Completed, r.Aborted, r.LastCompleted())
	}
}
