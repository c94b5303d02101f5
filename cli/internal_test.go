package cli

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/weir-stream/weir"
)

func TestVersionNamesModuleRevisionAndGo(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Path: weirModule, Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2030-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}}}
	got := formatVersion(info)
	want := "weir v1.2.3\nrevision abc123 (modified), committed 2030-01-02T03:04:05Z\nbuilt with go1.99\n"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	// A program that embeds weir names both modules.
	info = &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Path: "example.com/app", Version: "v0.1.0"},
		Deps: []*debug.Module{{Path: weirModule, Version: "v1.2.3"}}}
	got = formatVersion(info)
	for _, want := range []string{"weir v1.2.3\n", "program example.com/app v0.1.0\n", "revision unknown", "built with go1.99\n"} {
		if !strings.Contains(got, want) {
			t.Fatalf("%q lacks %q", got, want)
		}
	}
}

func TestVersionCommandPrintsTheGoVersion(t *testing.T) {
	var out, errb strings.Builder
	root := Command(&out, &errb)
	root.SetArgs([]string{"version"})
	if err := root.Execute(); err != nil {
		t.Fatalf("weir version: %v (%s)", err, errb.String())
	}
	if !strings.HasPrefix(out.String(), "weir ") || !strings.Contains(out.String(), "built with go") {
		t.Fatalf("weir version printed %q", out.String())
	}
}

func TestEndOfRunReportNamesTasksThatDroppedLateRecords(t *testing.T) {
	var b strings.Builder
	printLateDropped(&b, []weir.TaskMetrics{{Name: "events"}, {Name: "count -> format -> output", LateDropped: 7}})
	if got, want := b.String(), "weir: task \"count -> format -> output\" dropped 7 late records (too late for every window, and no late side output)\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestLatencyHistogramBucketsCoverEveryValueInOrder(t *testing.T) {
	prev := -1
	for _, v := range []int64{0, 1, 63, 64, 65, 127, 128, 1000, 1 << 20, 1<<40 + 12345, 1<<63 - 1} {
		i := latencyIndex(v)
		if i < prev || i >= latencyBuckets {
			t.Fatalf("value %d in bucket %d (previous %d, %d buckets)", v, i, prev, latencyBuckets)
		}
		if up := latencyUpper(i); up < v || (i > 0 && latencyUpper(i-1) >= v) {
			t.Fatalf("value %d in bucket %d of upper bound %d (the one before: %d)", v, i, up, latencyUpper(i-1))
		}
		prev = i
	}
	var h latencyHist
	for v := int64(1); v <= 1000; v++ {
		h.record(v * 1000)
	}
	if p50, p99, top := h.quantile(0.5), h.quantile(0.99), h.quantile(1); p50 < 500_000 || p50 > 516_000 || p99 < 990_000 || top != 1_000_000 {
		t.Fatalf("p50 %v, p99 %v, max %v of 1µs..1ms", p50, p99, top)
	}
}
