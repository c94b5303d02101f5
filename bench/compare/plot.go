package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
)

// The latency plot (--plot): p50 and p99 against the target rate, one
// color per engine, both axes logarithmic, as an SVG written by hand (no
// plotting dependency for one figure).
const (
	plotW, plotH                   = 760, 470
	plotLeft, plotRight            = 70, 190 // the legend goes on the right
	plotTop, plotBottom            = 40, 60
	plotFont                       = `font-family="sans-serif" font-size="12"`
	plotOverloadedFraction float64 = 0.95 // as the table's *
)

var plotColors = []string{"#1b6ac9", "#d1495b", "#edae49", "#00798c", "#66a182"}

// writeLatencyPlot reads the JSON of --latency --json from path and writes
// the plot to w.
func writeLatencyPlot(w io.Writer, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var res latencyResult
	if err := json.Unmarshal(b, &res); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	return plotLatency(w, res)
}

// logAxis maps values in [lo, hi] onto [from, to] logarithmically.
type logAxis struct{ lo, hi, from, to float64 }

func (a logAxis) at(v float64) float64 {
	return a.from + (math.Log10(v)-math.Log10(a.lo))/(math.Log10(a.hi)-math.Log10(a.lo))*(a.to-a.from)
}

// ticks returns the 1, 2, 5 steps of each decade within the axis.
func (a logAxis) ticks() []float64 {
	var out []float64
	for d := math.Pow(10, math.Floor(math.Log10(a.lo))); d <= a.hi; d *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if v := d * m; v >= a.lo*0.999 && v <= a.hi*1.001 {
				out = append(out, v)
			}
		}
	}
	return out
}

// decadeBounds widens [lo, hi] to whole decades.
func decadeBounds(lo, hi float64) (float64, float64) {
	return math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
}

func plotLatency(w io.Writer, res latencyResult) error {
	var pts []latencyPoint
	xlo, xhi, ylo, yhi := math.Inf(1), 0.0, math.Inf(1), 0.0
	for _, p := range res.Points {
		if p.TargetRate <= 0 || p.P50 <= 0 {
			continue
		}
		pts = append(pts, p)
		xlo, xhi = min(xlo, p.TargetRate), max(xhi, p.TargetRate)
		ylo, yhi = min(ylo, p.P50), max(yhi, p.P99)
	}
	if len(pts) == 0 {
		return fmt.Errorf("no measured rates to plot")
	}
	for _, peak := range res.Peaks {
		if peak > 0 {
			xhi = max(xhi, peak)
		}
	}
	xlo, xhi = decadeBounds(xlo, xhi)
	ylo, yhi = decadeBounds(ylo, yhi)
	x := logAxis{xlo, xhi, plotLeft, plotW - plotRight}
	y := logAxis{ylo, yhi, plotH - plotBottom, plotTop}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`+"\n", plotW, plotH, plotW, plotH)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", plotW, plotH)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-family="sans-serif" font-size="14">End-to-end latency against rate: keyed count, parallelism %d, exactly-once checkpoints every %gs</text>`+"\n",
		plotLeft, res.Parallelism, res.IntervalMS/1000)
	for _, v := range x.ticks() {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", x.at(v), plotTop, x.at(v), plotH-plotBottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" %s text-anchor="middle">%s</text>`+"\n", x.at(v), plotH-plotBottom+16, plotFont, rateLabel(v))
	}
	for _, v := range y.ticks() {
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", plotLeft, y.at(v), plotW-plotRight, y.at(v))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" %s text-anchor="end">%g</text>`+"\n", plotLeft-6, y.at(v)+4, plotFont, v)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" %s text-anchor="middle">target rate, events/s (log)</text>`+"\n", (plotLeft+plotW-plotRight)/2, plotH-plotBottom+40, plotFont)
	fmt.Fprintf(&b, `<text x="18" y="%d" %s text-anchor="middle" transform="rotate(-90 18 %d)">latency, ms (log)</text>`+"\n", (plotTop+plotH-plotBottom)/2, plotFont, (plotTop+plotH-plotBottom)/2)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888"/>`+"\n", plotLeft, plotTop, plotW-plotLeft-plotRight, plotH-plotTop-plotBottom)
	legendY := plotTop + 10
	for i, e := range res.Engines {
		color := plotColors[i%len(plotColors)]
		var mine []latencyPoint
		for _, p := range pts {
			if p.Engine == e {
				mine = append(mine, p)
			}
		}
		slices.SortFunc(mine, func(a, b latencyPoint) int { return cmp.Compare(a.TargetRate, b.TargetRate) })
		if peak := res.Peaks[e]; peak > 0 {
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-dasharray="2,4"/>`+"\n", x.at(peak), plotTop, x.at(peak), plotH-plotBottom, color)
		}
		for _, s := range []struct {
			name string
			v    func(latencyPoint) float64
			dash string
		}{{"p99", func(p latencyPoint) float64 { return p.P99 }, ""}, {"p50", func(p latencyPoint) float64 { return p.P50 }, ` stroke-dasharray="6,4"`}} {
			var line []string
			for _, p := range mine {
				line = append(line, fmt.Sprintf("%.1f,%.1f", x.at(p.TargetRate), y.at(s.v(p))))
			}
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(line, " "), color, s.dash)
			for _, p := range mine {
				fill := color
				if p.Rate < plotOverloadedFraction*p.TargetRate {
					fill = "white" // the engine fell behind the rate
				}
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s" stroke="%s"/>`+"\n", x.at(p.TargetRate), y.at(s.v(p)), fill, color)
			}
			lx := plotW - plotRight + 14
			fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>`+"\n", lx, legendY, lx+24, legendY, color, s.dash)
			fmt.Fprintf(&b, `<text x="%d" y="%d" %s>%s %s</text>`+"\n", lx+30, legendY+4, plotFont, e, s.name)
			legendY += 18
		}
	}
	lx := plotW - plotRight + 14
	fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="3.5" fill="white" stroke="#444"/><text x="%d" y="%d" %s>fell behind</text>`+"\n", lx+12, legendY+6, lx+30, legendY+10, plotFont)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#444" stroke-dasharray="2,4"/><text x="%d" y="%d" %s>peak</text>`+"\n", lx, legendY+26, lx+24, legendY+26, lx+30, legendY+30, plotFont)
	fmt.Fprintf(&b, `<text x="%d" y="%d" %s fill="#555">medians of %s runs of %gs after %gs warm-up; %s</text>`+"\n",
		plotLeft, plotH-8, plotFont, runsOf(pts), res.DurationS, res.WarmupS, loadOf(res.Machine))
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// loadOf returns the load average part of describeMachine's line.
func loadOf(machine string) string {
	if i := strings.Index(machine, "load average"); i >= 0 {
		return firstLine(machine[i:])
	}
	return ""
}

// rateLabel writes an events/s tick: 200k, 1M, 5M.
func rateLabel(v float64) string {
	if v >= 1e6 {
		return fmt.Sprintf("%gM", v/1e6)
	}
	return fmt.Sprintf("%gk", v/1e3)
}

// runsOf says how many runs the points' medians are of.
func runsOf(pts []latencyPoint) string {
	lo, hi := math.MaxInt, 0
	for _, p := range pts {
		lo, hi = min(lo, p.Runs), max(hi, p.Runs)
	}
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}
