package engine

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/task"
)

// Injector plans the failures of a run: Count kills, each at a random
// moment or at a named point, chosen by a seeded generator so that a seed
// names a failure schedule; or, from NewInjectorAt, one kill at a fixed
// moment. One failure is armed per attempt.
type Injector struct {
	mu        sync.Mutex
	rng       *rand.Rand
	remaining int
	injected  int
	armed     *arming
	at        time.Duration // > 0: the one kill's moment (NewInjectorAt)
	// MaxDelay bounds the wait before a random-moment kill.
	MaxDelay time.Duration
	// AfterCheckpoint makes a random-moment kill that is due wait, in a
	// job that takes checkpoints, until one has completed, so that the
	// recovery it causes restores a checkpoint however long the first
	// one takes (a loaded machine, sinks slow to start their
	// transactions). Named points are not held back.
	AfterCheckpoint bool
	// NamedWait is how long an armed named point may take to occur before
	// it turns into a kill at that moment (0: MaxDelay). A cluster's
	// attempts take longer to start (placement, building the job and
	// restoring state on the workers), so its points wait longer.
	NamedWait time.Duration
}

type arming struct {
	point task.Point // 0: a random moment
	skip  int        // occurrences of the point to let pass first
	delay time.Duration
}

// NewInjector returns an injector of n failures with the given seed.
func NewInjector(n int, seed uint64) *Injector {
	return &Injector{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), remaining: n, MaxDelay: 500 * time.Millisecond}
}

// NewInjectorAt returns an injector of one failure: a kill of a random
// subtask (chosen with seed) at d after the start of the attempt, or, in a
// job that takes checkpoints, as soon after that as one has completed, so
// that the recovery restores a checkpoint. weir bench latency --fail-after
// uses it to measure the latency of records around a recovery.
func NewInjectorAt(d time.Duration, seed uint64) *Injector {
	in := NewInjector(1, seed)
	in.at, in.MaxDelay = max(d, time.Nanosecond), max(d, time.Nanosecond)
	return in
}

// Injected returns how many failures were injected so far.
func (in *Injector) Injected() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.injected
}

// arm chooses the failure of the next attempt. A named point that has not
// occurred by MaxDelay turns into a kill at that moment, so that every
// armed failure happens while the attempt runs. restored says whether the
// attempt restores state (only then can recovery and replay points occur);
// checkpoints whether checkpoints are taken (without them only
// random-moment kills can happen). It returns the delay of a random-moment
// kill.
func (in *Injector) arm(restored, checkpoints bool) (time.Duration, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.armed = nil
	if in.remaining == 0 {
		return 0, false
	}
	if in.at > 0 {
		in.armed = &arming{delay: in.at}
		return in.at, true
	}
	points := []task.Point{task.PointAlignment, task.PointSnapshotBeforeAck, task.PointCompleteBeforeCommit}
	if restored {
		points = task.Points
	}
	if !checkpoints || in.rng.IntN(2) == 0 {
		d := time.Duration(in.rng.Int64N(int64(in.MaxDelay))) + time.Millisecond
		in.armed = &arming{delay: d}
		return d, true
	}
	in.armed = &arming{point: points[in.rng.IntN(len(points))], skip: in.rng.IntN(3)}
	if in.NamedWait > 0 {
		return in.NamedWait, true
	}
	return in.MaxDelay, true
}

// waitsForCheckpoint says a kill that is due waits for a completed
// checkpoint (NewInjectorAt, AfterCheckpoint).
func (in *Injector) waitsForCheckpoint() bool { return in.at > 0 || in.AfterCheckpoint }

// pick returns a random index below n, for the subtask to kill.
func (in *Injector) pick(n int) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.rng.IntN(n)
}

// fireRandom consumes an armed failure whose time has come: a
// random-moment kill, or a named point that did not occur in time.
func (in *Injector) fireRandom() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.armed == nil || in.remaining == 0 {
		return false
	}
	in.armed = nil
	in.remaining--
	in.injected++
	return true
}

// hook is task.Options.Inject: it fails at the armed named point.
func (in *Injector) hook(p task.Point, _ dataflow.SubtaskID, _ int64) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	a := in.armed
	if a == nil || a.point != p || in.remaining == 0 {
		return false
	}
	if a.skip > 0 {
		a.skip--
		return false
	}
	in.armed = nil
	in.remaining--
	in.injected++
	return true
}

// killClock times an attempt's random-moment kills: arm asks the injector
// for the next failure and, if it is a random-moment kill, sets the timer
// C fires at. The zero value with no injector never fires.
type killClock struct {
	in    *Injector
	timer *time.Timer
	C     <-chan time.Time
}

// arm arms the next failure (see Injector.arm), replacing a pending kill.
func (k *killClock) arm(restored, checkpoints bool) {
	if k.in == nil {
		return
	}
	if d, ok := k.in.arm(restored, checkpoints); ok {
		k.stop()
		k.timer = time.NewTimer(d)
		k.C = k.timer.C
	}
}

// retry makes C fire again after d, for a due kill that waits.
func (k *killClock) retry(d time.Duration) {
	k.stop()
	k.timer = time.NewTimer(d)
	k.C = k.timer.C
}

// fired notes that C fired: nothing is pending until the next arm.
func (k *killClock) fired() { k.C = nil }

// stop releases the timer.
func (k *killClock) stop() {
	if k.timer != nil {
		k.timer.Stop()
	}
}
