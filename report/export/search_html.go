package export

import (
	"html/template"
	"image/color"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/inferprobe/inferprobe/capacity"
)

var infeasibleColour = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}

// errorBars are the intervals of a chart's points, as distances below and
// above each.
type errorBars struct {
	plotter.XYs
	low, high []float64
}

func (e errorBars) YError(i int) (float64, float64) { return e.low[i], e.high[i] }

// searchChart draws statistic f against the concurrency of each step, the
// feasible steps blue and the others red, with the step's interval where
// its run has one and f's threshold dashed; ok is false when no step
// measured it.
func searchChart(f capacity.Filter, r *capacity.Result, points []SweepPoint) (template.HTML, bool, error) {
	type pt struct {
		x, y, lo, hi float64
		feasible     bool
		bounded      bool
	}
	var pts []pt
	for i, s := range r.Steps {
		y, ok := s.Metrics[f.Metric][f.Stat]
		if !ok {
			continue
		}
		q := pt{x: float64(s.Concurrency), y: y, feasible: s.Feasible}
		if iv, ok := stepInterval(points, i, f); ok {
			q.lo, q.hi, q.bounded = y-iv.Low, iv.High-y, true
		}
		pts = append(pts, q)
	}
	if len(pts) == 0 {
		return "", false, nil
	}
	slices.SortFunc(pts, func(a, b pt) int { return int(a.x - b.x) })
	p := plot.New()
	p.Title.Text = f.Metric + " " + f.Stat + " against concurrency"
	p.X.Label.Text = "concurrency"
	p.Y.Label.Text = f.Metric + " " + f.Stat
	p.Add(plotter.NewGrid())
	var all plotter.XYs
	bars := errorBars{}
	for _, q := range pts {
		all = append(all, plotter.XY{X: q.x, Y: q.y})
		if q.bounded {
			bars.XYs = append(bars.XYs, plotter.XY{X: q.x, Y: q.y})
			bars.low, bars.high = append(bars.low, q.lo), append(bars.high, q.hi)
		}
	}
	line, err := plotter.NewLine(all)
	if err != nil {
		return "", false, err
	}
	line.Color = p50Colour
	p.Add(line)
	for _, feasible := range []bool{true, false} {
		var xys plotter.XYs
		for _, q := range pts {
			if q.feasible == feasible {
				xys = append(xys, plotter.XY{X: q.x, Y: q.y})
			}
		}
		if len(xys) == 0 {
			continue
		}
		marks, err := plotter.NewScatter(xys)
		if err != nil {
			return "", false, err
		}
		marks.Color, marks.Shape, marks.Radius = p50Colour, draw.CircleGlyph{}, vg.Points(3.5)
		name := "feasible step"
		if !feasible {
			marks.Color, marks.Shape, name = infeasibleColour, draw.TriangleGlyph{}, "infeasible step"
		}
		p.Add(marks)
		p.Legend.Add(name, marks)
	}
	if len(bars.XYs) > 0 {
		eb, err := plotter.NewYErrorBars(bars)
		if err != nil {
			return "", false, err
		}
		p.Add(eb)
	}
	if f.Op != "" {
		threshold, err := plotter.NewLine(plotter.XYs{{X: pts[0].x, Y: f.Threshold}, {X: pts[len(pts)-1].x, Y: f.Threshold}})
		if err != nil {
			return "", false, err
		}
		threshold.Color, threshold.Dashes = color.Gray{Y: 0x60}, []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(threshold)
		p.Legend.Add("SLA: "+f.Op+" "+strconv.FormatFloat(f.Threshold, 'g', -1, 64), threshold)
	}
	p.Legend.Top, p.Legend.Left = true, true
	svg, err := inlineSVG(p, 20*vg.Centimeter, 10*vg.Centimeter)
	return svg, err == nil, err
}
