package cli_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// benchLatencyReport is the part of weir bench latency --json a plotting
// script reads.
type benchLatencyReport struct {
	Parallelism    int     `json:"parallelism"`
	Checkpoints    string  `json:"checkpoints"`
	TwoPhaseCommit bool    `json:"two_phase_commit"`
	PeakRate       float64 `json:"peak_rate"`
	Runs           []struct {
		Fraction   float64 `json:"peak_fraction"`
		TargetRate float64 `json:"target_rate"`
		Rate       float64 `json:"rate"`
		Records    int64   `json:"records"`
		P50        float64 `json:"p50_ms"`
		P99        float64 `json:"p99_ms"`
		P999       float64 `json:"p99_9_ms"`
		Max        float64 `json:"max_ms"`
		Recovery   *struct {
			Injected int     `json:"injected"`
			Restored int64   `json:"restored_checkpoint"`
			FailedAt float64 `json:"failed_at_s"`
			Records  int64   `json:"records"`
			P99      float64 `json:"p99_ms"`
			Max      float64 `json:"max_ms"`
		} `json:"recovery"`
	} `json:"runs"`
}

func benchLatency(t *testing.T, args ...string) benchLatencyReport {
	t.Helper()
	args = append([]string{"bench", "latency", "--duration", "300ms", "--warmup", "100ms", "--json"}, args...)
	code, stdout, stderr := weir(t, args...)
	if code != 0 {
		t.Fatalf("weir %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	var rep benchLatencyReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, stdout)
	}
	for i, r := range rep.Runs {
		if r.Records <= 0 || r.Rate <= 0 {
			t.Errorf("run %d measured %d records at %v/s", i, r.Records, r.Rate)
		}
		if !(0 < r.P50 && r.P50 <= r.P99 && r.P99 <= r.P999 && r.P999 <= r.Max) {
			t.Errorf("run %d: latencies not positive and ordered: p50 %v, p99 %v, p99.9 %v, max %v", i, r.P50, r.P99, r.P999, r.Max)
		}
	}
	return rep
}

func TestBenchLatencyRunsEachPeakFractionAfterThePeak(t *testing.T) {
	rep := benchLatency(t, "--peak-fraction", "0.25,0.5", "--unaligned")
	if rep.Parallelism != 2 || rep.Checkpoints != "unaligned" || rep.PeakRate <= 0 {
		t.Errorf("report header: %+v", rep)
	}
	if len(rep.Runs) != 3 {
		t.Fatalf("got %d runs, want 0.25, 0.5 and the peak", len(rep.Runs))
	}
	for i, want := range []float64{0.25, 0.5, 1} {
		if rep.Runs[i].Fraction != want {
			t.Errorf("run %d is at fraction %v, want %v", i, rep.Runs[i].Fraction, want)
		}
	}
	if got, want := rep.Runs[1].TargetRate, 0.5*rep.PeakRate; got != want {
		t.Errorf("the 0.5 run targets %v events/s, want half the peak, %v", got, want)
	}
	if rep.Runs[2].TargetRate != 0 {
		t.Errorf("the peak run is throttled to %v events/s", rep.Runs[2].TargetRate)
	}
}

func TestBenchLatencyMeasuresThePeakOnlyWithoutFractions(t *testing.T) {
	rep := benchLatency(t, "--peak-fraction", "")
	if len(rep.Runs) != 1 || rep.Runs[0].Fraction != 1 || rep.Runs[0].TargetRate != 0 || rep.PeakRate != rep.Runs[0].Rate {
		t.Errorf("want the peak run alone, got %+v", rep)
	}
}

func TestBenchLatencyMeasuresATwoPhaseCommitSinkAtCommit(t *testing.T) {
	rep := benchLatency(t, "--rate", "20000", "--two-phase-commit", "--checkpoint-interval", "50ms")
	if !rep.TwoPhaseCommit || rep.Checkpoints != "aligned" || len(rep.Runs) != 1 || rep.Runs[0].TargetRate != 20000 {
		t.Errorf("report: %+v", rep)
	}
}

func TestBenchLatencyFailsASubtaskAndMeasuresTheRecovery(t *testing.T) {
	rep := benchLatency(t, "--rate", "20000", "--checkpoint-interval", "50ms", "--duration", "1500ms", "--fail-after", "300ms")
	if len(rep.Runs) != 1 || rep.Runs[0].Recovery == nil {
		t.Fatalf("report without a recovery: %+v", rep)
	}
	c := rep.Runs[0].Recovery
	if c.Injected != 1 || c.Restored < 1 || c.FailedAt < 0.3 {
		t.Errorf("injected %d failures at %vs, restored checkpoint %d; want one at 0.3s or later and a restore", c.Injected, c.FailedAt, c.Restored)
	}
	if c.Records <= 0 || c.P99 <= 0 || c.Max < c.P99 {
		t.Errorf("window around the failure: %d records, p99 %v ms, max %v ms", c.Records, c.P99, c.Max)
	}
}

func TestBenchLatencyPrintsATable(t *testing.T) {
	code, stdout, stderr := weir(t, "bench", "latency", "--rate", "10000", "--duration", "200ms", "--warmup", "0s", "--checkpoint-interval", "0s")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "no checkpoints") || !strings.Contains(lines[1], "p99.9 ms") || !strings.HasPrefix(strings.TrimSpace(lines[2]), "rate") {
		t.Errorf("table:\n%s", stdout)
	}
}

func TestBenchLatencyRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--peak-fraction", "0.5,2"},
		{"--rate", "0"},
		{"--duration", "0s"},
		{"--two-phase-commit", "--checkpoint-interval", "0s"},
		{"--fail-after", "50ms"}, // in the warm-up
		{"--fail-after", "1s", "--checkpoint-interval", "0s"},
	} {
		code, _, stderr := weir(t, append([]string{"bench", "latency"}, args...)...)
		if code != 2 || !strings.Contains(stderr, args[0]) {
			t.Errorf("bench latency %v: exit %d, %s", args, code, stderr)
		}
	}
}
