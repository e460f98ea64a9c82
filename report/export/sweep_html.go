package export

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// sweepCurve is one chart of the sweep page: output token throughput
// against a latency's p50 and p99, one marker per successful point — the
// curve drawn by hand to pick an operating point.
type sweepCurve struct {
	title, latency, short string // latency is the metric tag: time_to_first_token
}

var sweepCurves = []sweepCurve{
	{"Output token throughput against time to first token", "time_to_first_token", "TTFT"},
	{"Output token throughput against inter-token latency", "inter_token_latency", "ITL"},
}

var (
	p50Colour = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	p99Colour = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
)

// sweepChart draws curve as an inline SVG; ok is false when no point has
// the latency (a non-streaming sweep has no TTFT).
func sweepChart(curve sweepCurve, points []SweepPoint) (template.HTML, bool, error) {
	p := plot.New()
	p.Title.Text = curve.title
	p.X.Label.Text = curve.latency + " (ms)"
	p.Y.Label.Text = "output_token_throughput (tokens/sec)"
	p.Add(plotter.NewGrid())
	drawn := false
	for _, q := range []struct {
		stat   string
		colour color.Color
		shape  draw.GlyphDrawer
	}{{"p50", p50Colour, draw.CircleGlyph{}}, {"p99", p99Colour, draw.TriangleGlyph{}}} {
		var xys plotter.XYs
		var labels []string
		for _, pt := range points {
			if pt.Failed != "" {
				continue
			}
			m := pt.figures()
			lat, ok := metricMean(m, curve.latency+"_"+q.stat)
			thru, _ := metricMean(m, "output_token_throughput_avg")
			if !ok {
				continue
			}
			xys = append(xys, plotter.XY{X: lat, Y: thru})
			labels = append(labels, pt.values())
		}
		if len(xys) == 0 {
			continue
		}
		drawn = true
		line, marks, err := plotter.NewLinePoints(xys)
		if err != nil {
			return "", false, err
		}
		line.Color, marks.Color, marks.Shape, marks.Radius = q.colour, q.colour, q.shape, vg.Points(3.5)
		names, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return "", false, err
		}
		for i := range names.TextStyle {
			names.TextStyle[i].XAlign, names.TextStyle[i].YAlign = draw.XLeft, draw.YBottom
		}
		names.Offset = vg.Point{X: vg.Points(4), Y: vg.Points(2)}
		p.Add(line, marks, names)
		p.Legend.Add(curve.short+" "+q.stat, line, marks)
	}
	if !drawn {
		return "", false, nil
	}
	// Room on the right for the points' labels and the legend (bottom
	// right, where a throughput-latency curve seldom goes), and above the
	// top point's label: a browser's font may be wider than gonum measured.
	xr, yr := p.X.Max-p.X.Min, p.Y.Max-p.Y.Min
	if xr == 0 {
		xr = math.Max(p.X.Max, 1)
	}
	if yr == 0 {
		yr = math.Max(p.Y.Max, 1)
	}
	p.X.Max += 0.35 * xr
	p.Y.Max += 0.08 * yr
	svg, err := inlineSVG(p, 20*vg.Centimeter, 12*vg.Centimeter)
	return svg, err == nil, err
}

// inlineSVG draws p as SVG of the given size, without the XML prolog a standalone file has, to
// sit inline in a page.
func inlineSVG(p *plot.Plot, w, h vg.Length) (template.HTML, error) {
	canvas := vgsvg.New(w, h)
	p.Draw(draw.New(canvas))
	var svg bytes.Buffer
	if _, err := canvas.WriteTo(&svg); err != nil {
		return "", err
	}
	b := svg.Bytes()
	if i := bytes.Index(b, []byte("<svg")); i > 0 {
		b = b[i:]
	}
	return template.HTML(b), nil // #nosec: gonum's own SVG
}

var sweepPage = template.Must(template.New("sweep").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>inferprobe sweep</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}
th:first-child,td:first-child{text-align:left}.failed{color:#b00}
figure{margin:1.5em 0}
</style></head><body>
<h1>inferprobe sweep</h1>
<p>{{len .Points}} points, run one after another; each point's own report is in its directory. Markers are labelled with {{.Names}}.</p>
{{range .Charts}}<figure>{{.}}</figure>
{{else}}<p>No point has latency figures to plot (every point failed, or the endpoint does not stream).</p>
{{end}}
<table><tr><th>point</th>{{range .Heads}}<th>{{.}}</th>{{end}}<th>errors</th><th>directory</th></tr>
{{range .Rows}}<tr{{if .Failed}} class="failed"{{end}}><td>{{.Label}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}<td>{{.Errors}}</td><td><a href="{{$.Up}}{{.Dir}}/report.html">{{.Dir}}</a>{{if .Failed}} (failed: {{.Failed}}){{end}}</td></tr>
{{end}}</table>
</body></html>
`))

// SweepHTML is the sweep's page: throughput against TTFT and ITL p50/p99,
// and the table of every point. Self-contained: inline SVG, no script.
func SweepHTML(points []SweepPoint) ([]byte, error) {
	type row struct {
		Label, Dir, Failed string
		Cells              []string
		Errors             int
	}
	data := struct {
		Points []SweepPoint
		Up     string // from the summary's directory to the sweep's
		Names  string
		Charts []template.HTML
		Heads  []string
		Rows   []row
	}{Points: points, Up: strings.Repeat("../", strings.Count(filepath.ToSlash(SweepSummaryDir(points)), "/")+1)}
	if len(points) > 0 {
		data.Names = points[0].names()
	}
	for _, c := range sweepCurves {
		svg, ok, err := sweepChart(c, points)
		if err != nil {
			return nil, fmt.Errorf("drawing %s: %w", c.latency, err)
		}
		if ok {
			data.Charts = append(data.Charts, svg)
		}
	}
	for _, c := range sweepColumns {
		data.Heads = append(data.Heads, c.head)
	}
	for _, p := range points {
		r := row{Label: p.Label(), Dir: p.artifacts(), Failed: p.Failed, Errors: p.errors()}
		m := p.figures()
		for _, c := range sweepColumns {
			cell := "-"
			if v, ok := metricMean(m, c.key); ok {
				cell = fmt.Sprintf("%.2f", v)
			}
			r.Cells = append(r.Cells, cell)
		}
		data.Rows = append(data.Rows, r)
	}
	var b bytes.Buffer
	if err := sweepPage.Execute(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
