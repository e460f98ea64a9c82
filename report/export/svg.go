package export

import (
	"fmt"
	"html/template"
	"math"
	"strings"
)

// point is one (x, y) of a chart.
type point struct{ x, y float64 }

// series is one line or set of dots.
type series struct {
	label  string
	color  string
	points []point
}

// chart draws an SVG line chart (dots when scatter is set) with linear axes
// and a few round ticks. It is plain markup: the report needs no script and
// no network.
type chart struct {
	title, xLabel, yLabel string
	scatter               bool
	series                []series
}

const (
	chartW, chartH                 = 560, 300
	padL, padR, padT, padB         = 64, 16, 28, 44
	plotW, plotH                   = chartW - padL - padR, chartH - padT - padB
	colorA, colorB, colorC, colorD = "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd"
	colorError                     = "#d62728"
)

func (c chart) svg() template.HTML {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img">`, chartW, chartH, chartW, chartH)
	fmt.Fprintf(&b, `<title>%s</title><text x="%d" y="18" class="t">%s</text>`, esc(c.title), padL, esc(c.title))
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), 0.0, math.Inf(-1)
	n := 0
	for _, s := range c.series {
		for _, p := range s.points {
			xmin, xmax, ymax = math.Min(xmin, p.x), math.Max(xmax, p.x), math.Max(ymax, p.y)
			ymin = math.Min(ymin, p.y)
			n++
		}
	}
	if n == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d">no data</text></svg>`, padL+plotW/2-30, padT+plotH/2)
		return template.HTML(b.String())
	}
	xt, yt := ticks(xmin, xmax), ticks(ymin, ymax)
	xmin, xmax, ymin, ymax = xt[0], xt[len(xt)-1], yt[0], yt[len(yt)-1]
	X := func(v float64) float64 { return padL + (v-xmin)/(xmax-xmin)*plotW }
	Y := func(v float64) float64 { return padT + plotH - (v-ymin)/(ymax-ymin)*plotH }
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" class="f"/>`, padL, padT, plotW, plotH)
	for _, v := range xt {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" class="g"/><text x="%.1f" y="%d" class="xt">%s</text>`,
			X(v), padT, X(v), padT+plotH, X(v), padT+plotH+14, num(v))
	}
	for _, v := range yt {
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" class="g"/><text x="%d" y="%.1f" class="yt">%s</text>`,
			padL, Y(v), padL+plotW, Y(v), padL-4, Y(v)+4, num(v))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" class="xl">%s</text>`, padL+plotW/2, chartH-6, esc(c.xLabel))
	fmt.Fprintf(&b, `<text x="12" y="%d" class="yl" transform="rotate(-90 12 %d)">%s</text>`, padT+plotH/2, padT+plotH/2, esc(c.yLabel))
	for i, s := range c.series {
		if c.scatter {
			for _, p := range s.points {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2" fill="%s"/>`, X(p.x), Y(p.y), s.color)
			}
		} else {
			var pts []string
			for _, p := range s.points {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", X(p.x), Y(p.y)))
			}
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5"/>`, strings.Join(pts, " "), s.color)
		}
		if len(c.series) > 1 {
			fmt.Fprintf(&b, `<text x="%d" y="%d" fill="%s" class="lg">%s</text>`, padL+plotW-8, padT+14+14*i, s.color, esc(s.label))
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// ticks returns about five round values spanning [lo, hi].
func ticks(lo, hi float64) []float64 {
	if hi <= lo {
		hi = lo + 1
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for v := math.Floor(lo/step) * step; ; v += step {
		out = append(out, v)
		if v >= hi-step*1e-9 {
			break
		}
	}
	return out
}

func num(v float64) string {
	if math.Abs(v) < 1e-12 {
		return "0"
	}
	return fmt.Sprintf("%.4g", v)
}

func esc(s string) string { return template.HTMLEscapeString(s) }
