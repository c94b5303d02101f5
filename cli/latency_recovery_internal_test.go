package cli

import (
	"testing"
	"time"

	"github.com/weir-stream/weir/internal/engine"
)

func TestRecoveryLatencyMeasuresTheWindowAroundTheFailure(t *testing.T) {
	start := time.Unix(1000, 0)
	slot := int64(latencySlot)
	s := &latencySlots{origin: start.UnixNano(), width: slot}
	// 1 ms of latency per record, 10 records per slot, for 10 s; records
	// emitted from 3 s to 3.5 s wait for the recovery: 400 ms down to
	// 100 ms; later ones 1 ms again.
	for i := range int64(100) {
		for k := range int64(10) {
			emit := s.origin + i*slot + k*slot/10
			v := int64(time.Millisecond)
			if i >= 30 && i < 35 {
				v = int64(400*time.Millisecond) - (i-30)*int64(75*time.Millisecond)
			}
			s.record(emit, v)
		}
	}
	failed := start.Add(3*time.Second + 50*time.Millisecond)
	rep := &engine.Report{Injected: 1, Recoveries: []engine.Recovery{{FailedAt: failed, Restored: 2, Duration: 300 * time.Millisecond}}}
	got, err := recoveryLatency(rep, s, start)
	if err != nil {
		t.Fatal(err)
	}
	// The window: slots 30 (the failure's) to 53 (2.3 s after the failure).
	if got.Records != 240 || got.WindowMS != 2400 || got.Restored != 2 || got.RecoveryMS != 300 {
		t.Errorf("window of %d records over %v ms, restored %d, recovery %v ms; want 240 over 2400, 2, 300", got.Records, got.WindowMS, got.Restored, got.RecoveryMS)
	}
	if got.Max < 400 || got.Max > 413 || got.PreFailureP99 < 1 || got.PreFailureP99 > 1.04 {
		t.Errorf("max %v ms, p99 before %v ms; want 400 and 1", got.Max, got.PreFailureP99)
	}
	// Slot 35 (3.5 s to 3.6 s) is the first after the failure whose p99 is
	// 1 ms again.
	if got.BackUnder != 550 {
		t.Errorf("back under the p99 after %v ms, want 550", got.BackUnder)
	}
	if _, err := recoveryLatency(&engine.Report{}, s, start); err == nil {
		t.Error("no error for a run without a failure")
	}
}

func TestProbeMeasuresARecordWhenFirstWritten(t *testing.T) {
	m := &probeMeasure{h: &latencyHist{}}
	seq := func(src, i int64) int64 { return src<<probeSeqBits | i }
	for _, c := range []struct {
		seq   int64
		first bool
	}{
		{seq(0, 0), true}, {seq(1, 0), true}, {seq(0, 1), true}, {seq(1, 5), true},
		{seq(0, 1), false}, {seq(1, 3), false}, // replayed after a restore
		{seq(0, 2), true}, {seq(3, 0), true},
	} {
		if got := m.first(c.seq); got != c.first {
			t.Errorf("record %d of source %d: first %v, want %v", c.seq&(1<<probeSeqBits-1), c.seq>>probeSeqBits, got, c.first)
		}
	}
}
