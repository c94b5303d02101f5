package source

import (
	"errors"
	"strings"
	"testing"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/task"
)

func newRunner(delay int64) *runner[int64] {
	return &runner[int64]{node: &node[int64]{ts: func(v int64) int64 { return v }, delay: delay}, maxTS: dataflow.MinWatermark}
}

// A restored runner's watermark trails the highest event time its
// snapshot saw, before it reads anything.
func TestRestoredRunnerKeepsTheHighestEventTimeSeen(t *testing.T) {
	r := newRunner(5)
	r.maxTS = 1_000
	restored := newRunner(5)
	if err := restored.RestoreWatermarkState(r.WatermarkState()); err != nil {
		t.Fatal(err)
	}
	if got, want := restored.Watermark(), int64(1_000-5-1); got != want {
		t.Fatalf("watermark after restore = %d, want %d", got, want)
	}
}

// A runner that had seen nothing restores to no watermark.
func TestRestoredRunnerThatSawNothingHasNoWatermark(t *testing.T) {
	restored := newRunner(0)
	if err := restored.RestoreWatermarkState(newRunner(0).WatermarkState()); err != nil {
		t.Fatal(err)
	}
	if got := restored.Watermark(); got != dataflow.MinWatermark {
		t.Fatalf("watermark after restore = %d, want none", got)
	}
}

func TestRestoringACorruptWatermarkStateFails(t *testing.T) {
	for _, data := range [][]byte{nil, {0x80}, append(newRunner(0).WatermarkState(), 0)} {
		if err := newRunner(0).RestoreWatermarkState(data); !errors.Is(err, codec.ErrCorrupt) {
			t.Errorf("restoring %x: %v, want %v", data, err, codec.ErrCorrupt)
		}
	}
}

// fixedSource is a connector without connector.Rescaler.
type fixedSource struct{ connector.Source[int64] }

// A source whose connector cannot move its positions refuses a rescale,
// naming the connector.
func TestRescalingASourceWithoutRescalerIsRefused(t *testing.T) {
	n := New[int64](fixedSource{}, nil, 0).(task.PositionRescaler)
	_, err := n.RescalePositions([][]byte{nil, nil}, 3)
	if err == nil || !strings.Contains(err.Error(), "cannot move positions to another parallelism (it is no connector.Rescaler)") {
		t.Fatalf("rescaling: %v, want a refusal", err)
	}
}
