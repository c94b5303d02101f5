package task

import (
	"encoding/binary"
	"fmt"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/exchange"
)

// This file is a subtask's watermarks: the input watermark combined from
// its channels' watermarks and idleness, advanced through the chain and
// forwarded (combine, advance), and the watermark state a snapshot holds.
//
// A subtask's watermark state (its channels' watermarks and idleness,
// its input and output watermarks) goes into its snapshot too. A
// subtask restarted alone, or a standby started from a checkpoint,
// restores it, so that it emits the same watermarks and idleness at the
// same places as the incarnation it replaces: its consumers, and an
// active standby's cursors, count those control elements.

// encodeWatermarks returns the subtask's watermark state.
func (s *subtask) encodeWatermarks() []byte {
	out := binary.AppendVarint(nil, s.inWM)
	out = binary.AppendVarint(out, s.outWM)
	idle := uint64(0)
	if s.idle {
		idle = 1
	}
	out = binary.AppendUvarint(out, idle)
	for c, wm := range s.chanWM {
		out = binary.AppendVarint(out, wm)
		out = binary.AppendUvarint(out, uint64(s.chanState[c]))
	}
	return out
}

// restoreWatermarks sets the watermark state from a snapshot's section.
func (s *subtask) restoreWatermarks(data []byte) error {
	bad := fmt.Errorf("restoring watermarks: %w", codec.ErrCorrupt)
	next := func() (int64, bool) {
		v, n := binary.Varint(data)
		if n <= 0 {
			return 0, false
		}
		data = data[n:]
		return v, true
	}
	nextU := func() (uint64, bool) {
		v, n := binary.Uvarint(data)
		if n <= 0 {
			return 0, false
		}
		data = data[n:]
		return v, true
	}
	in, ok1 := next()
	out, ok2 := next()
	idle, ok3 := nextU()
	if !ok1 || !ok2 || !ok3 {
		return bad
	}
	wms := make([]int64, 0, len(s.chanWM))
	states := make([]chanState, 0, len(s.chanWM))
	for len(data) > 0 {
		wm, ok := next()
		st, ok2 := nextU()
		if !ok || !ok2 || st > uint64(ended) {
			return bad
		}
		wms, states = append(wms, wm), append(states, chanState(st))
	}
	if len(wms) != len(s.chanWM) {
		return fmt.Errorf("restoring watermarks: the checkpoint has %d channels, the task %d", len(wms), len(s.chanWM))
	}
	copy(s.chanWM, wms)
	copy(s.chanState, states)
	s.inWM, s.outWM, s.idle = in, out, idle == 1
	s.tctx.Metrics.Watermark.Store(in)
	s.wmRestored = true
	return nil
}

// openWatermark tells the opened chain the restored input watermark, as
// the incarnation before had told it; the timers it fired then are not in
// the restored state, so nothing fires again, and nothing is emitted.
func (s *subtask) openWatermark() {
	if !s.wmRestored || s.inWM == dataflow.MinWatermark {
		return
	}
	w := s.inWM
	for _, op := range s.ops {
		w = op.Watermark(w)
	}
}

// combine recomputes the input watermark as the minimum over active
// channels and advances the chain when it grew. With no active channel the
// task tells its consumers it is idle.
func (s *subtask) combine() {
	min := int64(dataflow.MaxWatermark)
	anyActive := false
	holder := -1
	for c, st := range s.chanState {
		if st == active {
			anyActive = true
			if s.chanWM[c] < min {
				min, holder = s.chanWM[c], c
			}
		}
	}
	s.tctx.Metrics.HeldBackBy.Store(int64(holder))
	if !anyActive {
		if s.allEnded() {
			return
		}
		// No channel will advance its watermark until one becomes active
		// again, so the highest watermark any channel reached is safe to
		// apply now (Flink's status valve does the same).
		high := int64(dataflow.MinWatermark)
		for c, st := range s.chanState {
			if st != ended && s.chanWM[c] > high {
				high = s.chanWM[c]
			}
		}
		if high > s.inWM {
			s.advance(high)
		}
		if !s.idle {
			s.idle = true
			s.emit(exchange.Element{Kind: exchange.Idle})
		}
		return
	}
	if s.idle {
		s.idle = false
		s.emitWatermark(s.outWM)
	}
	if min > s.inWM {
		s.advance(min)
	}
}

// advance delivers input watermark wm to the chain in order and forwards
// the resulting watermark.
func (s *subtask) advance(wm int64) {
	s.inWM = wm
	s.tctx.Metrics.Watermark.Store(wm)
	w := wm
	for _, op := range s.ops {
		w = op.Watermark(w)
	}
	if w > s.outWM {
		s.emitWatermark(w)
	}
}

func (s *subtask) emitWatermark(w int64) {
	s.outWM = w
	s.emit(exchange.Element{Kind: exchange.Watermark, Time: w})
}
