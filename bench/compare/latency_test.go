package main

import (
	"encoding/xml"
	"strings"
	"testing"
)

func TestParseLatencyRunReadsBothRunnersReports(t *testing.T) {
	weir := `{
  "parallelism": 2, "checkpoints": "aligned", "checkpoint_interval_ms": 1000,
  "peak_rate": 16900000,
  "runs": [{"peak_fraction": 1, "target_rate": 0, "rate": 16900000, "records": 169000000,
    "p50_ms": 1.5, "p99_ms": 6.4, "p99_9_ms": 9, "max_ms": 12}]
}`
	flink := `{"engine": "flink", "parallelism": 2, "checkpoints": "aligned", "checkpoint_interval_ms": 1000, "two_phase_commit": false, "duration_s": 5.0, "warmup_s": 2.0, "runs": [{"peak_fraction": 0, "target_rate": 400000.0, "rate": 395176.1, "records": 1999990, "p50_ms": 0.737279, "p99_ms": 7.340031, "p99_9_ms": 18.874367, "max_ms": 24.084521}]}` + "\n"
	for name, c := range map[string]struct {
		out  string
		want latencyRun
	}{
		"weir":  {weir, latencyRun{Rate: 16900000, Records: 169000000, P50: 1.5, P99: 6.4, P999: 9, Max: 12}},
		"flink": {flink, latencyRun{Rate: 395176.1, Records: 1999990, P50: 0.737279, P99: 7.340031, P999: 18.874367, Max: 24.084521}},
	} {
		got, err := parseLatencyRun([]byte(c.out))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != c.want {
			t.Errorf("%s: got %+v, want %+v", name, got, c.want)
		}
	}
	for _, bad := range []string{"", "not json", `{"runs": []}`, `{"runs": [{"records": 0}]}`} {
		if _, err := parseLatencyRun([]byte(bad)); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
}

func TestLatencyTableSetsTheEnginesSideBySide(t *testing.T) {
	run := func(rate, p50, p99 float64, rss int64) latencyRun {
		return latencyRun{Rate: rate, Records: 1, P50: p50, P99: p99, P999: p99, Max: p99, PeakRSS: rss}
	}
	m, ok := medianRun([]latencyRun{run(1e6, 1, 3, 30<<20), run(2e6, 2, 9, 50<<20), run(3e6, 3, 4, 40<<20)})
	if !ok || m.Rate != 2e6 || m.P50 != 2 || m.P99 != 4 || m.PeakRSS != 40<<20 {
		t.Fatalf("medians %+v", m)
	}
	res := latencyResult{Engines: []string{"weir", "flink"}, Peaks: map[string]float64{"weir": 8e6, "flink": 2e6}, Points: []latencyPoint{
		{Engine: "weir", Basis: "peak", latencyRun: run(8e6, 5, 50, 60<<20)},
		{Engine: "flink", Basis: "peak", latencyRun: run(2e6, 40, 400, 900<<20)},
		{Engine: "weir", TargetRate: 1e6, Basis: "50% of flink's peak", latencyRun: run(1e6, 1, 2.5, 1)},
		{Engine: "flink", TargetRate: 1e6, Basis: "50% of flink's peak", latencyRun: run(1e6, 10, 25, 1)},
		{Engine: "weir", TargetRate: 4e6, Basis: "50% of weir's peak", latencyRun: run(4e6, 1, 3, 1)},
		{Engine: "flink", TargetRate: 4e6, Basis: "50% of weir's peak", latencyRun: run(1.5e6, 900, 1800, 1)},
	}, Failed: []string{"flink at 7200000 events/s run 2: weir-flink-bench: no records were measured"}}
	var b strings.Builder
	printLatencyTable(&b, res)
	out := b.String()
	for _, want := range []string{"weir p99 ms", "flink/weir p99", "50% of flink's peak", "25.00", "10.00x",
		"900.00*", "600.00x", "weir 8.00 M", "flink 900 MB",
		"failed: flink at 7200000 events/s run 2: weir-flink-bench: no records were measured"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestLatencyPlotDrawsBothPercentilesPerEngine(t *testing.T) {
	res := latencyResult{Engines: []string{"weir", "flink"}, Parallelism: 2, IntervalMS: 1000,
		Machine: "machine: 2 CPUs, load average 3.1 2.0 1.5\nworkload: ...",
		Peaks:   map[string]float64{"weir": 8e6, "flink": 2e6}, Points: []latencyPoint{
			{Engine: "weir", Runs: 3, latencyRun: latencyRun{Rate: 8e6, P50: 5, P99: 50}}, // the peak: not a point
			{Engine: "weir", Runs: 3, TargetRate: 1e6, latencyRun: latencyRun{Rate: 1e6, P50: 1, P99: 2.5}},
			{Engine: "flink", Runs: 3, TargetRate: 1e6, latencyRun: latencyRun{Rate: 1e6, P50: 10, P99: 25}},
			{Engine: "weir", Runs: 3, TargetRate: 4e6, latencyRun: latencyRun{Rate: 4e6, P50: 1, P99: 3}},
			{Engine: "flink", Runs: 3, TargetRate: 4e6, latencyRun: latencyRun{Rate: 1.5e6, P50: 900, P99: 1800}},
		}}
	var b strings.Builder
	if err := plotLatency(&b, res); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	var doc struct {
		Polylines []struct {
			Points string `xml:"points,attr"`
		} `xml:"polyline"`
		Circles []struct {
			Fill string `xml:"fill,attr"`
		} `xml:"circle"`
	}
	if err := xml.Unmarshal([]byte(svg), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, svg)
	}
	if len(doc.Polylines) != 4 { // p50 and p99 of each engine
		t.Fatalf("%d lines, want 4", len(doc.Polylines))
	}
	for _, l := range doc.Polylines {
		if n := len(strings.Fields(l.Points)); n != 2 {
			t.Errorf("a line of %d points, want the 2 rates", n)
		}
	}
	hollow := 0
	for _, c := range doc.Circles {
		if c.Fill == "white" {
			hollow++
		}
	}
	if hollow != 3 { // flink's p50 and p99 at 4M/s, and the legend's
		t.Errorf("%d hollow markers, want 3", hollow)
	}
	if !strings.Contains(svg, "load average 3.1 2.0 1.5") {
		t.Error("the plot does not state the load")
	}
	if err := plotLatency(&b, latencyResult{}); err == nil {
		t.Error("no error for nothing to plot")
	}
}
