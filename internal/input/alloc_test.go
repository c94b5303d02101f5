package input

import "testing"

// Step runs once per batch on the hot path: a batch, a watermark that
// advances the input watermark, a latency marker allocate nothing.
func TestStepsOnTheHotPathAllocateNothing(t *testing.T) {
	p, err := New(Config{Channels: 2})
	if err != nil {
		t.Fatal(err)
	}
	var seq, wm int64
	allocs := testing.AllocsPerRun(1000, func() {
		p.Step(0, Element{Kind: Data, Seq: seq, N: 8})
		seq += 8
		wm++
		p.Step(0, Element{Kind: Watermark, Time: wm})
		p.Step(1, Element{Kind: Watermark, Time: wm})
		p.Step(1, Element{Kind: Latency})
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per round of steps, want 0", allocs)
	}
	if got, _ := p.Watermark(); got != wm {
		t.Errorf("the input watermark is %d, want %d", got, wm)
	}
}
