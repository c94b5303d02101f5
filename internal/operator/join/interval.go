// Package join implements the state of the interval join: per key, the
// records of each side buffered by event time until the watermark makes
// them unable to match, and the matching of a new record against the
// other side's buffer. The public API runs it as a two-input keyed
// process function (weir.IntervalJoin); the window join is built from
// windows and needs nothing here.
package join

import (
	"fmt"

	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/operator/keyed"
	"github.com/weir-stream/weir/internal/state"
)

// Interval joins a record of the left side with event time t with every
// right record of the same key and event time in [t+Lower, t+Upper]
// (milliseconds). It works on the current key and time of its keyed core.
type Interval[K comparable, A, B any] struct {
	Lower, Upper int64
	core         *keyed.Core[K]
	left         *state.Table[K, map[int64][]A]
	right        *state.Table[K, map[int64][]B]
}

// Open registers the buffers on core; it runs once per subtask before
// any record.
func (j *Interval[K, A, B]) Open(core *keyed.Core[K]) error {
	var err error
	j.core = core
	// The buffers are the join's own; the records in them reach the
	// user's join function.
	if j.left, err = keyed.RegisterMap[int64, []A](core, "interval-join-left", state.Mutable[A]()); err != nil {
		return err
	}
	j.right, err = keyed.RegisterMap[int64, []B](core, "interval-join-right", state.Mutable[B]())
	return err
}

// Left buffers v, a left record at the current key and time, and calls
// emit with each buffered right record it matches and the later of the
// two event times. A late record is dropped; otherwise Left registers
// the event-time timer after which nothing can match v any more.
func (j *Interval[K, A, B]) Left(v A, emit func(b B, ts int64)) error {
	ok, err := joinSide(j.core, j.left, j.right, v, j.Lower, j.Upper, emit)
	if ok {
		// Once the watermark passes ts+upper, no record of b that can
		// still arrive on time matches this one.
		j.core.Events.Register(j.core.TS+j.Upper+1, j.core.Key)
	}
	return err
}

// Right is Left for a right record.
func (j *Interval[K, A, B]) Right(v B, emit func(a A, ts int64)) error {
	ok, err := joinSide(j.core, j.right, j.left, v, -j.Upper, -j.Lower, emit)
	if ok {
		j.core.Events.Register(j.core.TS-j.Lower+1, j.core.Key)
	}
	return err
}

// joinSide buffers v, a record of one side arriving at the current time
// ts, and joins it with the other side's buffered records whose times lie
// in [ts+lo, ts+hi]; emit is called with each match and the pair's later
// time. It returns false for a late record, which is dropped.
func joinSide[K comparable, Own, Other any](c *keyed.Core[K], own *state.Table[K, map[int64][]Own],
	other *state.Table[K, map[int64][]Other], v Own, lo, hi int64, emit func(o Other, ts int64)) (bool, error) {
	ts := c.TS
	if ts == dataflow.MinWatermark {
		return false, fmt.Errorf("record without event time in an interval join; give the source WithTimestamps")
	}
	if ts < c.WM {
		return false, nil // late
	}
	buf, ok := own.GetMutable(c.Shard, c.Key)
	if !ok {
		buf = map[int64][]Own{}
		own.PutNew(c.Shard, c.Key, buf)
	}
	buf[ts] = append(buf[ts], v)
	others, _ := other.Get(c.Shard, c.Key)
	for ots, os := range others {
		if ots >= ts+lo && ots <= ts+hi {
			for _, o := range os {
				emit(o, max(ts, ots))
			}
		}
	}
	return true, nil
}

// OnTimer drops the current key's buffered records that can no longer
// match at event time t.
func (j *Interval[K, A, B]) OnTimer(t int64) {
	k, sh := j.core.Key, j.core.Shard
	if buf, ok := j.left.GetMutable(sh, k); ok {
		for ts := range buf {
			if ts+j.Upper < t {
				delete(buf, ts)
			}
		}
		if len(buf) == 0 {
			j.left.Delete(sh, k)
		}
	}
	if buf, ok := j.right.GetMutable(sh, k); ok {
		for ts := range buf {
			if ts-j.Lower < t {
				delete(buf, ts)
			}
		}
		if len(buf) == 0 {
			j.right.Delete(sh, k)
		}
	}
}
