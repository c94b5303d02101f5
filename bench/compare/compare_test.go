package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// allocateEnv makes the test binary, run as a child by a test, touch
// 64 MiB and exit instead of running the tests.
const allocateEnv = "COMPARE_TEST_ALLOCATE"

func TestMain(m *testing.M) {
	if os.Getenv(allocateEnv) != "" {
		b := make([]byte, 64<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		fmt.Println(len(b))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestRunChildReportsThePeakRSSOfTheChild(t *testing.T) {
	t.Setenv(allocateEnv, "1")
	out, usage, err := runChild(context.Background(), time.Minute, os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(out)) != fmt.Sprint(64<<20) {
		t.Fatalf("the child did not allocate: %q", out)
	}
	// At least what the child touched; ru_maxrss is in kilobytes, so a
	// figure taken for bytes would be 1024 times too small, and one
	// scaled twice 1024 times too large.
	if usage.peakRSS < 64<<20 || usage.peakRSS > 1<<30 {
		t.Fatalf("peak RSS %d bytes, want 64 MiB and some", usage.peakRSS)
	}
	if usage.cpu <= 0 {
		t.Fatalf("CPU time %v", usage.cpu)
	}
}

func TestParseSummaryReadsBothRunnersLines(t *testing.T) {
	out := "some log line\n" +
		"q5: 2000000 events after 1000000 warm-up, parallelism 2, 4000 ms wall, 8000 ms CPU: 500000 events/s, 250000 events per CPU-second (whole run 30000 ms wall, 31000 ms CPU)\n"
	m, err := parseSummary([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if m.events != 2_000_000 || m.wall != 4*time.Second || m.cpu != 8*time.Second {
		t.Fatalf("got %+v", m)
	}
	if got := m.perCPUSecond(); got != 250_000 {
		t.Fatalf("per CPU-second %v, want 250000", got)
	}
	if _, err := parseSummary([]byte("q5: failed\n")); err == nil {
		t.Fatal("no error for output without a summary line")
	}
	if _, err := parseSummary([]byte("q0: 10 events after 0 warm-up, parallelism 1, 0 ms wall, 0 ms CPU: 10 rows\n")); err == nil {
		t.Fatal("no error for a phase too short to time")
	}
}

func TestMedianAndSpread(t *testing.T) {
	ms := []measurement{
		{events: 100, cpu: time.Second},     // 100/s
		{events: 100, cpu: time.Second / 2}, // 200/s
		{events: 100, cpu: time.Second / 4}, // 400/s
	}
	med, spread, ok := median(ms, measurement.perCPUSecond)
	if !ok || med != 200 || spread != 0.75 { // (400-100)/2/200
		t.Fatalf("median %v spread %v ok %v", med, spread, ok)
	}
	med, _, _ = median(ms[:2], measurement.perCPUSecond)
	if med != 150 {
		t.Fatalf("median of two %v, want their mean 150", med)
	}
	if _, _, ok := median(nil, measurement.perCPUSecond); ok {
		t.Fatal("median of no runs reported ok")
	}
}

func TestTableShowsRatiosAndFailures(t *testing.T) {
	run := func(events int64, cpu time.Duration, rss int64) measurement {
		return measurement{events: events, wall: cpu, cpu: cpu, peakRSS: rss}
	}
	rows := []row{{query: "q1", runs: map[string][]measurement{
		"weir":  {run(3_000_000, time.Second, 40<<20)},
		"flink": {run(1_000_000, time.Second, 700<<20)},
		"loop":  {run(6_000_000, time.Second, 10<<20)},
	}, failed: []string{"flink run 2: timed out"}}}
	var b strings.Builder
	printTable(&b, rows, options{runs: 1, par: 2})
	out := b.String()
	for _, want := range []string{"3.00x", "0.50x", "3.00 M", "1.00 M", "6.00 M", "40 MB", "700 MB", "failed: q1: flink run 2: timed out"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestSQLTableSetsSQLBesideGoAndFlink(t *testing.T) {
	run := func(events int64, cpu time.Duration) measurement {
		return measurement{events: events, wall: cpu, cpu: cpu}
	}
	rows := []row{{query: "q5", runs: map[string][]measurement{
		"weir":  {run(4_000_000, time.Second)},
		"sql":   {run(3_000_000, time.Second)},
		"flink": {run(1_000_000, time.Second)},
	}}}
	var b strings.Builder
	printSQLTable(&b, rows, options{runs: 1, par: 2, sql: true})
	out := b.String()
	for _, want := range []string{"4.00 M", "3.00 M", "1.00 M", "0.75x", "3.00x"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}
