package exec

import (
	"fmt"
	"time"

	"github.com/weir-stream/weir"
)

// WindowKind is a window table function of Flink's: TUMBLE, HOP,
// CUMULATE or SESSION.
type WindowKind uint8

// The window kinds.
const (
	Tumble   WindowKind = iota // TUMBLE(size)
	Hop                        // HOP(slide, size)
	Cumulate                   // CUMULATE(step, size)
	Session                    // SESSION(gap)
)

var windowKindNames = [...]string{"TUMBLE", "HOP", "CUMULATE", "SESSION"}

func (k WindowKind) String() string {
	if int(k) < len(windowKindNames) {
		return windowKindNames[k]
	}
	return fmt.Sprintf("WindowKind(%d)", k)
}

// WindowSpec describes a window table function and, for
// WindowAggregate, the aggregation over its windows.
type WindowSpec struct {
	Kind WindowKind
	// Size is the window size of TUMBLE, HOP and CUMULATE.
	Size time.Duration
	// Step is HOP's slide and CUMULATE's step.
	Step time.Duration
	// Gap is SESSION's gap.
	Gap time.Duration
	// Offset shifts window starts from the epoch (TUMBLE, HOP, CUMULATE).
	Offset time.Duration
	// Time is the column of the time attribute, a TIMESTAMP(3) rowtime:
	// every row's record timestamp must equal its value there (the
	// planner's sources assign timestamps from it).
	Time int
	// ProcTime says the time attribute is processing time (PROCTIME()):
	// WindowAggregate then assigns rows to TUMBLE, HOP and CUMULATE
	// windows by the wall clock; SESSION and WindowTVF refuse it.
	ProcTime bool
	// Keys are, for WindowAggregate, the group key columns beyond
	// window_start and window_end (sessions are per group key); for a
	// SESSION WindowTVF, the PARTITION BY columns.
	Keys []int
	// Aggs are WindowAggregate's aggregate calls.
	Aggs []AggSpec
	// Updating says the input is an updating changelog; both functions
	// refuse it, as Flink's window operators do.
	Updating bool
	// Name names the operators (default "window-aggregate" or
	// "window-tvf").
	Name string
}

// assigner returns weir's window assigner for s, or why s is refused.
func (s WindowSpec) assigner() (weir.WindowAssigner, error) {
	switch {
	case s.Updating:
		return nil, fmt.Errorf("exec: %s windows need an append-only input, and this one updates", s.Kind)
	case s.ProcTime && s.Kind == Session:
		return nil, fmt.Errorf("exec: SESSION windows on processing time are not supported; use an event-time attribute")
	}
	pos := func(what string, d time.Duration) error {
		if d <= 0 || d%time.Millisecond != 0 {
			return fmt.Errorf("exec: %s window %s must be a positive number of milliseconds, not %v", s.Kind, what, d)
		}
		return nil
	}
	switch s.Kind {
	case Tumble:
		if err := pos("size", s.Size); err != nil {
			return nil, err
		}
		return weir.Tumbling(s.Size, s.Offset), nil
	case Hop:
		if err := pos("size", s.Size); err != nil {
			return nil, err
		}
		if err := pos("slide", s.Step); err != nil {
			return nil, err
		}
		return weir.Sliding(s.Size, s.Step, s.Offset), nil
	case Cumulate:
		if err := pos("size", s.Size); err != nil {
			return nil, err
		}
		if err := pos("step", s.Step); err != nil {
			return nil, err
		}
		if s.Size%s.Step != 0 {
			return nil, fmt.Errorf("exec: CUMULATE window size %v must be a multiple of its step %v", s.Size, s.Step)
		}
		return cumulating{size: s.Size.Milliseconds(), step: s.Step.Milliseconds(), offset: s.Offset.Milliseconds()}, nil
	case Session:
		if err := pos("gap", s.Gap); err != nil {
			return nil, err
		}
		return weir.Session(s.Gap), nil
	}
	return nil, fmt.Errorf("exec: unknown window kind %v", s.Kind)
}

// cumulating is CUMULATE's assigner: windows that all start where a
// window of size starts and end every step up to size; a record belongs
// to every one of them that ends after it.
type cumulating struct{ size, step, offset int64 }

func (c cumulating) Assign(dst []weir.Window, ts int64) []weir.Window {
	start := ts - mod(ts-c.offset, c.size)
	for end := start + c.step; end <= start+c.size; end += c.step {
		if end > ts {
			dst = append(dst, weir.Window{Start: start, End: end})
		}
	}
	return dst
}

func (c cumulating) Merging() bool { return false }

func (c cumulating) String() string {
	return fmt.Sprintf("Cumulate(step=%dms, size=%dms)", c.step, c.size)
}

// mod is a mod b in [0, b).
func mod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}
