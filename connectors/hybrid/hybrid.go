// Package hybrid is a source that reads a sequence of sources one after
// another, as Flink's HybridSource does: history from files, say, then a
// Kafka topic from where the history ended.
//
// Every stage but the last must be bounded. Each subtask of the hybrid
// source reads its share of the first stage to its end, then opens the
// next stage, built from where the previous one ended (End), and so on;
// it ends when the last stage ends. A subtask switches when its own share
// ends, without waiting for the other subtasks, so one subtask may read
// the second stage while another still reads the first; a stage's source
// is opened with the same SubtaskInfo as the hybrid source's.
//
// # Event time
//
// The hybrid source has one event time across its stages. A stage that
// ends does not end the input, so no end-of-input watermark follows it:
// the watermark stays where the stage left it and moves on with the next
// stage's records; it never goes back, even when the next stage starts
// with records older than the last of the previous one (those records are
// then late as they would be in any source). The hybrid reader tracks
// event time itself (connector.EventTimer): a stage whose reader tracks it
// per split (a Kafka partition) holds the watermark at its slowest split.
// With weir.WithSourceTimestamps every stage's reader must have timestamps
// (connector.Timestamper).
//
// # Positions
//
// A position holds the index of the stage the subtask reads, the End the
// stage was built from, and the stage reader's own position. A restored
// subtask rebuilds its stage from that End and resumes it there, so a
// stage built by a function must build the same source from the same End.
// Positions do not move to another parallelism (the source is no
// connector.Rescaler), and the source is not connector.Deterministic:
// under fine-grained failover a failed subtask restarts with its
// consumers.
package hybrid

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/weir-stream/weir/connector"
)

// End says where a subtask's previous stage ended; the next stage is
// built from it.
type End struct {
	// Stage is the index of the stage that ended (0 for the first).
	Stage int
	// Position is the final position of that stage's reader, in the
	// stage's connector's own form.
	Position connector.Position
	// EventTime is the subtask's event-time progress when the stage
	// ended, in epoch milliseconds: the highest event time read in it or
	// an earlier stage (for a reader that tracks splits, the minimum over
	// its splits of the highest read from each). It is math.MinInt64 if
	// the job has no event time or nothing had been read.
	EventTime int64
}

// Stage builds a stage's source when a subtask switches to it, from where
// the subtask's previous stage ended. It is called again with the same
// End when a subtask restores into the stage, so it must build the same
// source from the same End. An error fails the subtask.
type Stage[T any] func(ctx context.Context, end End) (connector.Source[T], error)

// Then returns a stage that reads src from its start, whatever the
// previous stage ended at.
func Then[T any](src connector.Source[T]) Stage[T] {
	return func(context.Context, End) (connector.Source[T], error) { return src, nil }
}

// New returns a source reading first and then, in turn, the sources that
// the stages build. first and every stage but the last must be bounded.
func New[T any](first connector.Source[T], then ...Stage[T]) connector.Source[T] {
	return &source[T]{first: first, then: append([]Stage[T](nil), then...)}
}

type source[T any] struct {
	first connector.Source[T]
	then  []Stage[T]
}

// stages returns the number of stages.
func (s *source[T]) stages() int { return 1 + len(s.then) }

func (s *source[T]) Open(ctx context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[T], error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	p, err := decodePosition(pos)
	if err != nil {
		return nil, err
	}
	if p.stage >= s.stages() {
		return nil, fmt.Errorf("hybrid source: the position names stage %d of a source of %d stages (did the job's stages change?)", p.stage, s.stages())
	}
	r := &reader[T]{s: s, info: info, stage: p.stage, end: p.end, progress: p.end.EventTime, high: math.MinInt64}
	if err := r.openStage(ctx, p.inner); err != nil {
		return nil, err
	}
	return r, nil
}

// reader reads one subtask's share of the stages, one at a time.
type reader[T any] struct {
	s     *source[T]
	info  connector.SubtaskInfo
	stage int
	end   End // what the current stage was built from (zero End with EventTime MinInt64 for the first)
	cur   connector.Reader[T]
	eof   bool // the last stage ended

	ts       func(T) int64           // event time, with SetEventTime
	own      bool                    // event times from the stages' readers (UseTimestamps)
	et       connector.EventTimer[T] // the current stage reader's, if it tracks event time
	high     int64                   // highest event time read in the current stage, if cur is no EventTimer
	progress int64                   // last EventTimeProgress, never decreasing
}

// openStage opens the current stage's reader at inner (nil: its start).
func (r *reader[T]) openStage(ctx context.Context, inner connector.Position) error {
	src := r.s.first
	if r.stage > 0 {
		var err error
		if src, err = r.s.then[r.stage-1](ctx, r.end); err != nil {
			return fmt.Errorf("hybrid source: building stage %d: %w", r.stage, err)
		}
		if src == nil {
			return connector.ConfigError(fmt.Errorf("hybrid source: stage %d built no source", r.stage))
		}
	}
	cur, err := src.Open(ctx, r.info, inner)
	if err != nil {
		return fmt.Errorf("hybrid source: opening stage %d: %w", r.stage, err)
	}
	r.cur, r.et, r.high = cur, nil, math.MinInt64
	return r.timeStage()
}

// timeStage hands the current stage reader the event time, as the engine
// hands it to a plain source's reader.
func (r *reader[T]) timeStage() error {
	if r.own {
		tsr, ok := r.cur.(connector.Timestamper)
		if !ok {
			return connector.ConfigError(fmt.Errorf("hybrid source: the reader of stage %d (%T) has no timestamps of its own (it is no connector.Timestamper)", r.stage, r.cur))
		}
		tsr.UseTimestamps()
	}
	if et, ok := r.cur.(connector.EventTimer[T]); ok && (r.ts != nil || r.own) {
		if !r.own {
			et.SetEventTime(r.ts)
		}
		r.et = et
	}
	return nil
}

// Read reads the current stage. When a stage other than the last ends,
// it switches to the next and returns 0, nil; after the last it returns
// io.EOF.
func (r *reader[T]) Read(ctx context.Context, buf []T) (int, error) {
	if r.eof {
		return 0, io.EOF
	}
	n, err := r.cur.Read(ctx, buf)
	if errors.Is(err, io.EOF) {
		if r.stage == r.s.stages()-1 {
			r.eof = true
			return 0, io.EOF
		}
		return 0, r.switchStage(ctx)
	}
	if err != nil {
		return n, err
	}
	if r.et == nil {
		switch {
		case r.own:
			for _, t := range r.cur.(connector.Timestamper).Timestamps()[:n] {
				r.high = max(r.high, t)
			}
		case r.ts != nil:
			for _, v := range buf[:n] {
				r.high = max(r.high, r.ts(v))
			}
		}
	}
	return n, nil
}

// switchStage closes the ended stage and opens the next one from where
// it ended.
func (r *reader[T]) switchStage(ctx context.Context) error {
	end := End{Stage: r.stage, Position: r.cur.Position(), EventTime: r.EventTimeProgress()}
	err := r.cur.Close()
	r.cur = nil
	if err != nil {
		return fmt.Errorf("hybrid source: closing stage %d: %w", r.stage, err)
	}
	r.stage, r.end = r.stage+1, end
	return r.openStage(ctx, nil)
}

// Position returns the current stage, the End it was built from and its
// reader's position.
func (r *reader[T]) Position() connector.Position {
	var inner connector.Position // a stage that failed to open stands at its start
	if r.cur != nil {
		inner = r.cur.Position()
	}
	return encodePosition(position{stage: r.stage, end: r.end, inner: inner})
}

// SetEventTime implements connector.EventTimer.
func (r *reader[T]) SetEventTime(ts func(T) int64) {
	r.ts = ts
	r.timeStage() // no error without own
}

// EventTimeProgress implements connector.EventTimer: the current stage's
// progress, never below where the earlier stages ended.
func (r *reader[T]) EventTimeProgress() int64 {
	p := r.high
	if r.et != nil {
		p = r.et.EventTimeProgress()
	}
	r.progress = max(r.progress, p)
	return r.progress
}

// UseTimestamps implements connector.Timestamper by the stages' readers,
// each of which must have timestamps; a stage reader that has none fails
// the next Read.
func (r *reader[T]) UseTimestamps() {
	r.own = true
	r.et = nil
	if err := r.timeStage(); err != nil {
		r.cur = failing[T]{r.cur, err}
	}
}

// Timestamps implements connector.Timestamper: the current stage
// reader's.
func (r *reader[T]) Timestamps() []int64 {
	if tsr, ok := r.cur.(connector.Timestamper); ok {
		return tsr.Timestamps()
	}
	return nil
}

func (r *reader[T]) Close() error {
	if r.cur == nil {
		return nil
	}
	err := r.cur.Close()
	r.cur = nil
	return err
}

// failing is a reader whose Read fails with err.
type failing[T any] struct {
	connector.Reader[T]
	err error
}

func (f failing[T]) Read(context.Context, []T) (int, error) { return 0, f.err }
