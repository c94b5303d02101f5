package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// row is one query's runs per engine ("weir", "sql", "flink", "loop").
type row struct {
	query  string
	runs   map[string][]measurement
	failed []string
}

// median returns the median of f over ms, and the spread: half the range
// as a fraction of the median. ok is false without runs.
func median(ms []measurement, f func(measurement) float64) (med, spread float64, ok bool) {
	if len(ms) == 0 {
		return 0, 0, false
	}
	v := make([]float64, len(ms))
	for i, m := range ms {
		v[i] = f(m)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		med = v[len(v)/2]
	} else {
		med = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return med, (v[len(v)-1] - v[0]) / 2 / med, true
}

// printTable writes the comparison: medians of events/s and events per
// CPU-second per engine, the weir/Flink ratios, the loop's events per
// CPU-second and weir's share of it, and each median's spread.
func printTable(w io.Writer, rows []row, o options) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "query\tweir ev/s\tFlink ev/s\tweir/Flink\tweir ev/CPU-s\tFlink ev/CPU-s\tweir/Flink\tloop ev/CPU-s\tweir/loop\tweir RSS\tFlink RSS\tspread weir, Flink, loop (per CPU-s)\t")
	perSec := measurement.perSecond
	perCPU := measurement.perCPUSecond
	var notes []string
	for _, r := range rows {
		ws, _, wsOK := median(r.runs["weir"], perSec)
		fs, _, fsOK := median(r.runs["flink"], perSec)
		wc, wcs, wcOK := median(r.runs["weir"], perCPU)
		fc, fcs, fcOK := median(r.runs["flink"], perCPU)
		lc, lcs, lcOK := median(r.runs["loop"], perCPU)
		wr, _, wrOK := median(r.runs["weir"], rss)
		fr, _, frOK := median(r.runs["flink"], rss)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.query,
			cell(ws, wsOK), cell(fs, fsOK), ratio(ws, fs, wsOK && fsOK),
			cell(wc, wcOK), cell(fc, fcOK), ratio(wc, fc, wcOK && fcOK),
			cell(lc, lcOK), ratio(wc, lc, wcOK && lcOK),
			rssCell(wr, wrOK), rssCell(fr, frOK),
			strings.Join([]string{spread(wcs, wcOK), spread(fcs, fcOK), spread(lcs, lcOK)}, ", "))
		for _, f := range r.failed {
			notes = append(notes, r.query+": "+f)
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "\nmedians of %d runs; ev = events; M = million; spread = half the range of the runs over the median\n", o.runs)
	fmt.Fprintln(w, "weir/loop compares weir's events per CPU-second at parallelism", o.par, "with a single-threaded loop's (bench/loops)")
	fmt.Fprintln(w, "RSS = the median peak resident set size of the engine's process (the kernel's ru_maxrss of the exited child), MB = 2^20 bytes")
	for _, n := range notes {
		fmt.Fprintln(w, "failed:", n)
	}
}

// printSQLTable writes the comparison of weir's SQL with weir's Go-API
// queries and Flink: medians of events per CPU-second and the ratios
// SQL/Go and SQL/Flink, then SQL's events/s and the spreads.
func printSQLTable(w io.Writer, rows []row, o options) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "query\tGo ev/CPU-s\tSQL ev/CPU-s\tFlink ev/CPU-s\tSQL/Go\tSQL/Flink\tSQL ev/s\tspread Go, SQL, Flink (per CPU-s)\t")
	perCPU := measurement.perCPUSecond
	for _, r := range rows {
		gc, gcs, gcOK := median(r.runs["weir"], perCPU)
		sc, scs, scOK := median(r.runs["sql"], perCPU)
		fc, fcs, fcOK := median(r.runs["flink"], perCPU)
		ss, _, ssOK := median(r.runs["sql"], measurement.perSecond)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.query,
			cell(gc, gcOK), cell(sc, scOK), cell(fc, fcOK), ratio(sc, gc, scOK && gcOK), ratio(sc, fc, scOK && fcOK),
			cell(ss, ssOK), strings.Join([]string{spread(gcs, gcOK), spread(scs, scOK), spread(fcs, fcOK)}, ", "))
	}
	tw.Flush()
	fmt.Fprintf(w, "\nmedians of %d runs; SQL = weir running the query's published Flink SQL; Go = weir's Go-API query\n", o.runs)
}

// rss is a run's peak resident set size, for median.
func rss(m measurement) float64 { return float64(m.peakRSS) }

// rssCell formats a peak RSS in bytes as megabytes.
func rssCell(v float64, ok bool) string {
	if !ok || v <= 0 {
		return "—"
	}
	return megabytes(int64(v))
}

// megabytes formats n bytes in MB (2^20 bytes).
func megabytes(n int64) string {
	return fmt.Sprintf("%.0f MB", float64(n)/(1<<20))
}

func cell(v float64, ok bool) string {
	if !ok {
		return "—"
	}
	return millions(v)
}

func ratio(a, b float64, ok bool) string {
	if !ok || b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

func spread(s float64, ok bool) string {
	if !ok {
		return "—"
	}
	return fmt.Sprintf("±%.0f%%", math.Round(s*100))
}

// millions formats v (per second) in millions with three significant digits.
func millions(v float64) string {
	switch {
	case v >= 10e6:
		return fmt.Sprintf("%.1f M", v/1e6)
	case v >= 1e6:
		return fmt.Sprintf("%.2f M", v/1e6)
	default:
		return fmt.Sprintf("%.3f M", v/1e6)
	}
}
