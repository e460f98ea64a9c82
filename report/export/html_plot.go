package export

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// point is one (x, y) of a chart.
type point struct{ x, y float64 }

// series is one line of a chart, or a set of dots.
type series struct {
	label  string
	points []point
	dots   bool
	color  color.Color // nil: the next colour of the palette
}

// figure is one chart of the report: what it shows, kept apart from how it
// is drawn, so that tests can read a chart's data.
type figure struct {
	id, title      string
	xLabel, yLabel string
	logX           bool
	// percent marks a CDF: its y axis runs from 0 to 100.
	percent bool
	series  []series
	bins    []plotter.HistogramBin // a histogram's bars, when it is one
	// floor draws a dashed horizontal line (the configured concurrency); 0: none.
	floor float64
}

var (
	palette = []color.Color{
		color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff},
		color.RGBA{0x2c, 0xa0, 0x2c, 0xff}, color.RGBA{0x94, 0x67, 0xbd, 0xff},
	}
	// Dashes tell the series apart on a black-and-white print too.
	dashes     = [][]vg.Length{nil, {vg.Points(5), vg.Points(2)}, {vg.Points(1.5), vg.Points(1.5)}, {vg.Points(6), vg.Points(2), vg.Points(1.5), vg.Points(2)}}
	colorError = color.RGBA{0xd6, 0x27, 0x28, 0xff}
	barFill    = color.RGBA{0x9e, 0xc5, 0xe5, 0xff}
	gridColor  = color.Gray{0xe0}
	floorColor = color.Gray{0x60}
	sans       = font.Font{Typeface: "Liberation", Variant: "Sans"}
)

// Charts are drawn at this size; the page scales them to its width.
const chartW, chartH = 11 * vg.Centimeter, 6.5 * vg.Centimeter

// keyEntry is one line of a chart's key, which the page writes under the
// chart in HTML: inside the plot a legend would hide data, and a browser
// lacking the font the plot measured with would overflow it.
type keyEntry struct {
	Label, Color, Dash string // Dash: an SVG stroke-dasharray, empty for a solid line
	Dots               bool
}

// drawn is a figure as the page shows it.
type drawn struct {
	SVG template.HTML // empty without data
	Key []keyEntry
}

// draw draws f with gonum/plot as inline SVG, with its key.
func (f figure) draw() (drawn, error) {
	if f.empty() {
		return drawn{}, nil
	}
	p, key, err := f.plot()
	if err != nil {
		return drawn{}, err
	}
	p.Legend = plot.NewLegend() // the page writes the key under the chart
	c := vgsvg.New(chartW, chartH)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return drawn{}, err
	}
	// The XML prolog and comment before <svg> do not belong inside HTML.
	out := b.String()
	out = out[strings.Index(out, "<svg"):]
	out = strings.Replace(out, "<svg ", fmt.Sprintf(`<svg role="img" aria-label="%s" `, esc(f.title)), 1)
	return drawn{SVG: template.HTML(out), Key: key}, nil
}

// plot lays f out with gonum/plot, for any canvas, and returns its key;
// each key entry's plotter is in the plot's legend too, which a canvas
// without a page around it (a PNG) shows.
func (f figure) plot() (*plot.Plot, []keyEntry, error) {
	p := plot.New()
	styleText(p)
	p.Y.Tick.Marker = plot.TickerFunc(linearTicks)
	p.X.Label.Text, p.Y.Label.Text = f.xLabel, f.yLabel
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = gridColor, gridColor
	grid.Vertical.Width, grid.Horizontal.Width = vg.Points(0.5), vg.Points(0.5)
	p.Add(grid)
	if len(f.bins) > 0 {
		h := &plotter.Histogram{Bins: f.bins, FillColor: barFill}
		h.LineStyle = draw.LineStyle{Color: palette[0], Width: vg.Points(0.5)}
		p.Add(h)
		p.Y.Tick.Marker = countTicks{}
	}
	var key []keyEntry
	for i, s := range f.series {
		if len(s.points) == 0 {
			continue
		}
		xys := make(plotter.XYs, len(s.points))
		for j, pt := range s.points {
			xys[j].X, xys[j].Y = pt.x, pt.y
		}
		c := s.color
		if c == nil {
			c = palette[i%len(palette)]
		}
		if s.dots {
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", f.title, err)
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(2.2), Shape: draw.CrossGlyph{}}
			p.Add(sc)
			if s.label != "" {
				p.Legend.Add(s.label, sc)
			}
			key = append(key, keyEntry{Label: s.label, Color: cssColor(c), Dots: true})
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f.title, err)
		}
		l.LineStyle = draw.LineStyle{Color: c, Width: vg.Points(1.3), Dashes: dashes[i%len(dashes)]}
		p.Add(l)
		if s.label != "" {
			p.Legend.Add(s.label, l)
		}
		key = append(key, keyEntry{Label: s.label, Color: cssColor(c), Dash: dashArray(l.Dashes)})
	}
	if f.floor > 0 {
		l, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: f.floor}, {X: p.X.Max, Y: f.floor}})
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f.title, err)
		}
		l.LineStyle = draw.LineStyle{Color: floorColor, Width: vg.Points(0.8), Dashes: dashes[1]}
		p.Add(l)
		key = append(key, keyEntry{Label: "configured " + num(f.floor), Color: cssColor(floorColor), Dash: dashArray(l.Dashes)})
	}
	// One value only: widen the axis around it by a factor, not by gonum's
	// ±1, which below 1 ms would take a log axis below zero.
	if p.X.Min == p.X.Max {
		p.X.Min, p.X.Max = p.X.Min/1.25, p.X.Max*1.25
	}
	if f.logX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicks{}
	} else {
		p.X.Tick.Marker = plot.TickerFunc(linearTicks)
	}
	p.Y.Min = math.Min(p.Y.Min, 0)
	if p.Y.Max == p.Y.Min {
		p.Y.Max = p.Y.Min + 1
	}
	if f.percent {
		p.Y.Min, p.Y.Max = 0, 100
	}
	return p, key, nil
}

func cssColor(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}

func dashArray(d []vg.Length) string {
	var parts []string
	for _, l := range d {
		parts = append(parts, num(l.Points()))
	}
	return strings.Join(parts, ",")
}

func (f figure) empty() bool {
	for _, s := range f.series {
		if len(s.points) > 0 {
			return false
		}
	}
	return len(f.bins) == 0
}

// styleText sets every text of p in a sans-serif face, at sizes that stay
// legible when the chart is printed at half a page's width.
func styleText(p *plot.Plot) {
	set := func(s *text.Style, size vg.Length) { s.Font = font.From(sans, size) }
	set(&p.Title.TextStyle, 10)
	set(&p.X.Label.TextStyle, 9)
	set(&p.Y.Label.TextStyle, 9)
	set(&p.X.Tick.Label, 8)
	set(&p.Y.Tick.Label, 8)
}

// logTicks marks a log axis at 1, 2 and 5 of each decade, with unlabelled
// minor ticks between; a range too narrow for two of those gets linear
// ticks, which then still read right on the log axis.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	labelled := 0
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		decade := math.Pow(10, e)
		for m := 1.0; m < 10; m++ {
			v := m * decade
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = num(v)
				labelled++
			}
			out = append(out, t)
		}
	}
	if labelled < 2 {
		return linearTicks(lo, hi)
	}
	return out
}

// linearTicks are gonum's default ticks, labelled as the page writes
// numbers (100, not 100.00).
func linearTicks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ticks {
		if t.Label != "" {
			ticks[i].Label = num(t.Value)
		}
	}
	return ticks
}

// countTicks are the default ticks of an axis of counts, without the
// fractions that a small count's range gets.
type countTicks struct{}

func (countTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range linearTicks(lo, hi) {
		if t.Value == math.Trunc(t.Value) {
			out = append(out, t)
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
