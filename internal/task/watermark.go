package task

import (
	"encoding/binary"
	"fmt"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/exchange"
	"github.com/weir-stream/weir/internal/input"
)

// This file is a subtask's watermarks: the input watermark combined from
// its channels' watermarks and idleness, advanced through the chain and
// forwarded (advance: the input protocol combines them, input.go), and
// the watermark state a snapshot holds.
//
// A subtask's watermark state (its channels' watermarks and idleness,
// its input and output watermarks) goes into its snapshot too. A
// subtask restarted alone, or a standby started from a checkpoint,
// restores it, so that it emits the same watermarks and idleness at the
// same places as the incarnation it replaces: its consumers, and an
// active standby's cursors, count those control elements.

// encodeWatermarks returns the subtask's watermark state: w, the input
// protocol's, and the output watermark.
func (s *subtask) encodeWatermarks(w *input.Watermarks) []byte {
	return appendWatermarks(nil, w, s.outWM)
}

// appendWatermarks appends the encoding of watermark state w with output
// watermark outWM.
func appendWatermarks(dst []byte, w *input.Watermarks, outWM int64) []byte {
	dst = binary.AppendVarint(dst, w.Input)
	dst = binary.AppendVarint(dst, outWM)
	idle := uint64(0)
	if w.Idle {
		idle = 1
	}
	dst = binary.AppendUvarint(dst, idle)
	for _, m := range w.Channels {
		dst = binary.AppendVarint(dst, m.Watermark)
		dst = binary.AppendUvarint(dst, uint64(m.State))
	}
	return dst
}

// restoreWatermarks sets the output watermark and what the chain and the
// consumers were told from a snapshot's section, and returns the input
// protocol's watermark state.
func (s *subtask) restoreWatermarks(data []byte) (*input.Watermarks, error) {
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
		return nil, bad
	}
	w := &input.Watermarks{Input: in, Idle: idle == 1, Channels: make([]input.ChannelMark, 0, len(s.decode))}
	for len(data) > 0 {
		wm, ok := next()
		st, ok2 := nextU()
		if !ok || !ok2 || st > uint64(input.ChanEnded) {
			return nil, bad
		}
		w.Channels = append(w.Channels, input.ChannelMark{Watermark: wm, State: input.ChannelState(st)})
	}
	if len(w.Channels) != len(s.decode) {
		return nil, fmt.Errorf("restoring watermarks: the checkpoint has %d channels, the task %d", len(w.Channels), len(s.decode))
	}
	s.inWM, s.outWM, s.idle = in, out, w.Idle
	s.tctx.Metrics.Watermark.Store(in)
	s.wmRestored = true
	return w, nil
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

// advanceSource advances a source chain to the watermark the records its
// source read so far allow, if that is later.
func (s *subtask) advanceSource() {
	if wm := s.source.Watermark(); wm > s.inWM {
		s.advance(wm)
	}
}

func (s *subtask) emitWatermark(w int64) {
	s.outWM = w
	s.emit(exchange.Element{Kind: exchange.Watermark, Time: w})
}

// followIdler tells the consumers of a chain with an IdleAssigner when
// its idleness changed: Idle when it went idle, and the output watermark,
// which makes their channels active again, when records came.
func (s *subtask) followIdler() {
	if s.idler == nil || s.finished {
		return
	}
	switch idle := s.idler.Idle(); {
	case idle && !s.idle:
		s.idle = true
		s.emit(exchange.Element{Kind: exchange.Idle})
	case !idle && s.idle:
		s.idle = false
		s.emitWatermark(s.outWM)
	}
}
