package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// latencyOptions are the settings of the latency comparison (--latency).
type latencyOptions struct {
	duration, warmup time.Duration
	keys             int64
	fractions        []float64
	// bufferTimeouts are Flink's execution.buffer-timeout.interval per
	// Flink variant; "default" keeps Flink's (100ms).
	bufferTimeouts []string
	jsonPath       string
}

// latencyRun is one run of one engine at one rate: the fields of weir
// bench latency --json's run that both runners print, and the peak RSS of
// the engine's process.
type latencyRun struct {
	Rate    float64 `json:"rate"`
	Records int64   `json:"records"`
	P50     float64 `json:"p50_ms"`
	P99     float64 `json:"p99_ms"`
	P999    float64 `json:"p99_9_ms"`
	Max     float64 `json:"max_ms"`
	PeakRSS int64   `json:"peak_rss_bytes"`
}

// latencyPoint is an engine's medians at one target rate.
type latencyPoint struct {
	Engine     string  `json:"engine"`
	TargetRate float64 `json:"target_rate"` // events/s; 0: unthrottled, the peak
	Basis      string  `json:"basis"`       // what the rate is a fraction of
	Runs       int     `json:"runs"`
	latencyRun
}

// latencyResult is what --latency --json writes and the plot reads.
type latencyResult struct {
	Machine     string             `json:"machine"`
	Parallelism int                `json:"parallelism"`
	IntervalMS  float64            `json:"checkpoint_interval_ms"`
	DurationS   float64            `json:"duration_s"`
	WarmupS     float64            `json:"warmup_s"`
	Keys        int64              `json:"keys"`
	Engines     []string           `json:"engines"`
	Peaks       map[string]float64 `json:"peaks"` // median peak events/s per engine
	Points      []latencyPoint     `json:"points"`
	Failed      []string           `json:"failed,omitempty"` // runs that measured nothing, and why
}

// latencyEngine runs one engine's latency benchmark at a rate.
type latencyEngine struct {
	name string
	// cmd is the command without the rate flags, which args appends.
	cmd  []string
	args func(rate float64) []string
}

// parseLatencyRun reads the first run of a weir bench latency --json
// report, which the Flink runner's latency mode prints alike.
func parseLatencyRun(out []byte) (latencyRun, error) {
	var rep struct {
		Runs []latencyRun `json:"runs"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return latencyRun{}, fmt.Errorf("reading the latency report: %w\n%s", err, out)
	}
	if len(rep.Runs) == 0 || rep.Runs[0].Records <= 0 {
		return latencyRun{}, fmt.Errorf("the latency report has no measured run:\n%s", out)
	}
	return rep.Runs[0], nil
}

func (e latencyEngine) run(ctx context.Context, rate float64, timeout time.Duration) (latencyRun, error) {
	out, usage, err := runChild(ctx, timeout, e.cmd[0], append(slices.Clone(e.cmd[1:]), e.args(rate)...)...)
	if err != nil {
		return latencyRun{}, err
	}
	r, err := parseLatencyRun(out)
	r.PeakRSS = usage.peakRSS
	return r, err
}

// latencyEngines returns weir (the weir command's bench latency) and one
// Flink runner per buffer timeout.
func latencyEngines(o options, weirCmd, flinkJar string) []latencyEngine {
	l := o.latency
	common := []string{"--keys", fmt.Sprint(l.keys), "--duration", l.duration.String(), "--warmup", l.warmup.String(),
		"--checkpoint-interval", o.interval.String()}
	weirArgs := func(rate float64) []string {
		if rate == 0 {
			return []string{"--peak-fraction", ""}
		}
		return []string{"--rate", strconv.FormatFloat(rate, 'f', 0, 64)}
	}
	engines := []latencyEngine{{name: "weir", args: weirArgs,
		cmd: append([]string{weirCmd, "bench", "latency", "--json", "-p", fmt.Sprint(o.par)}, common...)}}
	if o.noFlink {
		return engines
	}
	for _, bt := range l.bufferTimeouts {
		cmd := append([]string{o.java}, strings.Fields(o.jvmOpts)...)
		cmd = append(append(cmd, "-jar", flinkJar, "latency", "--parallelism", fmt.Sprint(o.par)), common...)
		name := "flink"
		if bt != "default" {
			cmd = append(cmd, "--buffer-timeout", bt)
			name = "flink-" + bt
		}
		engines = append(engines, latencyEngine{name: name, cmd: cmd,
			args: func(rate float64) []string { return []string{"--rate", strconv.FormatFloat(rate, 'f', 0, 64)} }})
	}
	return engines
}

// runLatency measures each engine's peak --runs times (alternating the
// engines' order), then runs every engine at the fractions of weir's
// median peak and of the first Flink variant's, --runs rounds over all
// rates with the engines alternating, and prints the table.
func runLatency(ctx context.Context, o options, engines []latencyEngine, machine string) error {
	peaks := map[string][]latencyRun{}
	var failed []string
	measure := func(round int, rate float64, what string, into map[string][]latencyRun) error {
		order := engines
		if round%2 == 1 {
			order = reversed(engines)
		}
		for _, e := range order {
			r, err := e.run(ctx, rate, o.timeout)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				logf("%s %s run %d: %v", e.name, what, round+1, err)
				failed = append(failed, fmt.Sprintf("%s %s run %d: %s", e.name, what, round+1, lastLine(err.Error())))
				continue
			}
			logf("%s %s run %d: %.0f events/s, p50 %.3f ms, p99 %.3f ms, max %.1f ms, peak RSS %s", e.name, what, round+1,
				r.Rate, r.P50, r.P99, r.Max, megabytes(r.PeakRSS))
			into[e.name] = append(into[e.name], r)
		}
		return nil
	}
	for i := range o.runs {
		if err := measure(i, 0, "peak", peaks); err != nil {
			return err
		}
	}
	res := latencyResult{Machine: machine, Parallelism: o.par, IntervalMS: float64(o.interval) / 1e6,
		DurationS: o.latency.duration.Seconds(), WarmupS: o.latency.warmup.Seconds(), Keys: o.latency.keys,
		Peaks: map[string]float64{}}
	for _, e := range engines {
		res.Engines = append(res.Engines, e.name)
		if p, ok := medianRun(peaks[e.name]); ok {
			res.Peaks[e.name] = p.Rate
			res.Points = append(res.Points, latencyPoint{Engine: e.name, Basis: "peak", Runs: len(peaks[e.name]), latencyRun: p})
		}
	}
	type target struct {
		rate  float64
		basis string
	}
	var targets []target
	for _, base := range engines[:min(2, len(engines))] { // weir and the first Flink variant
		peak, ok := res.Peaks[base.name]
		if !ok {
			return fmt.Errorf("no peak of %s was measured", base.name)
		}
		for _, f := range o.latency.fractions {
			targets = append(targets, target{f * peak, fmt.Sprintf("%g%% of %s's peak", f*100, base.name)})
		}
	}
	slices.SortFunc(targets, func(a, b target) int { return cmp.Compare(a.rate, b.rate) })
	runs := make([]map[string][]latencyRun, len(targets))
	for i := range runs {
		runs[i] = map[string][]latencyRun{}
	}
	for round := range o.runs {
		for i, t := range targets {
			if err := measure(round, t.rate, fmt.Sprintf("at %.0f events/s", t.rate), runs[i]); err != nil {
				return err
			}
		}
	}
	for i, t := range targets {
		for _, e := range engines {
			if m, ok := medianRun(runs[i][e.name]); ok {
				res.Points = append(res.Points, latencyPoint{Engine: e.name, TargetRate: t.rate, Basis: t.basis, Runs: len(runs[i][e.name]), latencyRun: m})
			}
		}
	}
	res.Failed = failed
	fmt.Println()
	fmt.Println(machine)
	printLatencyTable(os.Stdout, res)
	if o.latency.jsonPath == "" {
		return nil
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(o.latency.jsonPath, append(b, '\n'), 0o644)
}

// medianRun returns the median of each field over rs, separately.
func medianRun(rs []latencyRun) (latencyRun, bool) {
	if len(rs) == 0 {
		return latencyRun{}, false
	}
	med := func(f func(latencyRun) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return latencyRun{
		Rate:    med(func(r latencyRun) float64 { return r.Rate }),
		Records: int64(med(func(r latencyRun) float64 { return float64(r.Records) })),
		P50:     med(func(r latencyRun) float64 { return r.P50 }),
		P99:     med(func(r latencyRun) float64 { return r.P99 }),
		P999:    med(func(r latencyRun) float64 { return r.P999 }),
		Max:     med(func(r latencyRun) float64 { return r.Max }),
		PeakRSS: int64(med(func(r latencyRun) float64 { return float64(r.PeakRSS) })),
	}, true
}

// printLatencyTable writes one row per target rate (the peaks first):
// each engine's median p50 and p99, marked * where the engine fell more
// than 5% short of the rate, and each Flink variant's p99 over weir's.
func printLatencyTable(w io.Writer, res latencyResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "target ev/s\trate is\t"
	for _, e := range res.Engines {
		head += e + " p50 ms\t" + e + " p99 ms\t"
	}
	for _, e := range res.Engines[1:] {
		head += e + "/weir p99\t"
	}
	fmt.Fprintln(tw, head)
	byTarget := map[float64][]latencyPoint{}
	var order []float64
	for _, p := range res.Points {
		if _, ok := byTarget[p.TargetRate]; !ok {
			order = append(order, p.TargetRate)
		}
		byTarget[p.TargetRate] = append(byTarget[p.TargetRate], p)
	}
	for _, t := range order {
		pts := map[string]latencyPoint{}
		basis := ""
		for _, p := range byTarget[t] {
			pts[p.Engine], basis = p, p.Basis
		}
		line := "peak\teach engine's peak\t"
		if t > 0 {
			line = fmt.Sprintf("%s\t%s\t", millions(t), basis)
		}
		for _, e := range res.Engines {
			p, ok := pts[e]
			if !ok {
				line += "—\t—\t"
				continue
			}
			short := ""
			if t > 0 && p.Rate < 0.95*t {
				short = "*"
			}
			line += fmt.Sprintf("%.2f%s\t%.2f%s\t", p.P50, short, p.P99, short)
		}
		weir, wok := pts["weir"]
		for _, e := range res.Engines[1:] {
			p, ok := pts[e]
			line += ratio(p.P99, weir.P99, ok && wok && t > 0) + "\t"
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nmedians; * = the engine fell more than 5% short of the target rate (overloaded: its latency grows with the run)")
	fmt.Fprint(w, "peaks (median events/s):")
	for _, e := range res.Engines {
		fmt.Fprintf(w, " %s %s", e, millions(res.Peaks[e]))
	}
	fmt.Fprint(w, "\npeak RSS (median over the peak runs):")
	for _, p := range res.Points {
		if p.TargetRate == 0 {
			fmt.Fprintf(w, " %s %s", p.Engine, megabytes(p.PeakRSS))
		}
	}
	fmt.Fprintln(w)
	for _, f := range res.Failed {
		fmt.Fprintln(w, "failed:", f)
	}
}

// lastLine is the last non-empty line of s: a runner's own message after
// the exit status.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
