package weir

import (
	"fmt"
	"time"
)

// Window is a half-open event-time interval [Start, End) in epoch
// milliseconds.
type Window struct {
	Start int64 `json:"window_start"`
	End   int64 `json:"window_end"`
}

// MaxTimestamp is the last event time in the window, End-1. A window fires
// when the watermark reaches it, and its results carry it as event time.
func (w Window) MaxTimestamp() int64 { return w.End - 1 }

func (w Window) intersects(o Window) bool { return w.Start <= o.End && o.Start <= w.End }

func (w Window) cover(o Window) Window {
	return Window{Start: min(w.Start, o.Start), End: max(w.End, o.End)}
}

// WindowAssigner decides which windows a record belongs to.
type WindowAssigner interface {
	// Assign appends the windows of a record with event time ts to dst.
	Assign(dst []Window, ts int64) []Window
	// Merging reports whether windows merge when they overlap (sessions).
	Merging() bool
	String() string
}

// Tumbling returns fixed-size, non-overlapping windows aligned to the epoch
// (plus offset, if given).
func Tumbling(size time.Duration, offset ...time.Duration) WindowAssigner {
	return &sliding{size: size.Milliseconds(), slide: size.Milliseconds(), offset: off(offset)}
}

// Sliding returns windows of the given size starting every slide; a record
// belongs to size/slide windows.
func Sliding(size, slide time.Duration, offset ...time.Duration) WindowAssigner {
	return &sliding{size: size.Milliseconds(), slide: slide.Milliseconds(), offset: off(offset)}
}

func off(o []time.Duration) int64 {
	if len(o) > 0 {
		return o[0].Milliseconds()
	}
	return 0
}

type sliding struct{ size, slide, offset int64 }

// windowStart returns the start of the window of length slide holding ts.
func windowStart(ts, offset, slide int64) int64 {
	r := (ts - offset) % slide
	if r < 0 {
		r += slide
	}
	return ts - r
}

func (s *sliding) Assign(dst []Window, ts int64) []Window {
	last := windowStart(ts, s.offset, s.slide)
	for start := last; start > ts-s.size; start -= s.slide {
		dst = append(dst, Window{Start: start, End: start + s.size})
	}
	return dst
}

func (s *sliding) Merging() bool { return false }

func (s *sliding) String() string {
	if s.size == s.slide {
		return fmt.Sprintf("tumbling(%v)", time.Duration(s.size)*time.Millisecond)
	}
	return fmt.Sprintf("sliding(%v, %v)", time.Duration(s.size)*time.Millisecond, time.Duration(s.slide)*time.Millisecond)
}

func (s *sliding) validate() error {
	if s.size <= 0 || s.slide <= 0 {
		return fmt.Errorf("window size and slide must be at least 1ms, got %s", s)
	}
	if s.slide > s.size {
		return fmt.Errorf("window slide must not exceed its size, got %s", s)
	}
	return nil
}

// Session returns windows that group records of a key separated by less
// than gap; a window ends gap after its last record and merges with
// windows it overlaps.
func Session(gap time.Duration) WindowAssigner { return &session{gap: gap.Milliseconds()} }

type session struct{ gap int64 }

func (s *session) Assign(dst []Window, ts int64) []Window {
	return append(dst, Window{Start: ts, End: ts + s.gap})
}

func (s *session) Merging() bool { return true }

func (s *session) String() string {
	return fmt.Sprintf("session(%v)", time.Duration(s.gap)*time.Millisecond)
}

func (s *session) validate() error {
	if s.gap <= 0 {
		return fmt.Errorf("session gap must be at least 1ms, got %s", s)
	}
	return nil
}
