package weir

import (
	"time"

	"github.com/weir-stream/weir/internal/operator/window"
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
	return &sliding{window.Sliding{Size: size.Milliseconds(), Slide: size.Milliseconds(), Offset: off(offset)}}
}

// Sliding returns windows of the given size starting every slide; a record
// belongs to size/slide windows.
func Sliding(size, slide time.Duration, offset ...time.Duration) WindowAssigner {
	return &sliding{window.Sliding{Size: size.Milliseconds(), Slide: slide.Milliseconds(), Offset: off(offset)}}
}

func off(o []time.Duration) int64 {
	if len(o) > 0 {
		return o[0].Milliseconds()
	}
	return 0
}

// sliding and session show the window package's assigners as
// WindowAssigners; the window operator calls those directly.
type sliding struct{ a window.Sliding }

func (s *sliding) Assign(dst []Window, ts int64) []Window {
	return appendWindows(dst, s.a.Assign(nil, ts))
}
func (s *sliding) Merging() bool   { return false }
func (s *sliding) String() string  { return s.a.String() }
func (s *sliding) validate() error { return s.a.Validate() }

// Session returns windows that group records of a key separated by less
// than gap; a window ends gap after its last record and merges with
// windows it overlaps.
func Session(gap time.Duration) WindowAssigner {
	return &session{window.Session{Gap: gap.Milliseconds()}}
}

type session struct{ a window.Session }

func (s *session) Assign(dst []Window, ts int64) []Window {
	return appendWindows(dst, s.a.Assign(nil, ts))
}
func (s *session) Merging() bool   { return true }
func (s *session) String() string  { return s.a.String() }
func (s *session) validate() error { return s.a.Validate() }

// appendWindows appends ws to dst.
func appendWindows[From, To ~struct {
	Start int64 `json:"window_start"`
	End   int64 `json:"window_end"`
}](dst []To, ws []From) []To {
	for _, w := range ws {
		dst = append(dst, To(w))
	}
	return dst
}

// assignFunc returns how the window operator assigns windows by a: the
// window package's assigner itself for the built-in ones, a conversion
// of a's windows for others.
func assignFunc(a WindowAssigner) func([]window.Window, int64) []window.Window {
	switch a := a.(type) {
	case *sliding:
		return a.a.Assign
	case *session:
		return a.a.Assign
	case *procSession:
		return a.a.Assign
	}
	return func(dst []window.Window, ts int64) []window.Window {
		return appendWindows(dst, a.Assign(nil, ts))
	}
}
