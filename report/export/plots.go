package export

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/inferprobe/inferprobe/gputelemetry"
	"github.com/inferprobe/inferprobe/record"
)

// PlotsDir is where --auto-plot writes its PNGs, as AIPerf 0.13's
// --auto-plot (which runs `aiperf plot` on the artifact directory) does.
const PlotsDir = "plots"

// The PNGs are drawn at this size and resolution (1500×800 pixels).
const (
	pngW, pngH = 25.4 * vg.Centimeter, 13.55 * vg.Centimeter
	pngDPI     = 150
)

// A PNG of --auto-plot: its file name, which is AIPerf 0.13's name of the
// plot in its default set (plot/default_plot_config.yaml), and how it is
// drawn; nil when the run has no data for it (AIPerf skips such a plot too).
type pngPlot struct {
	name string
	draw func(draw.Canvas) error
}

// WritePlots writes the PNGs of AIPerf 0.13's single-run default set that
// the run has data for into dir/plots, and returns their names:
// ttft_over_time.png (each request's TTFT by request number),
// ttft_timeline.png (each request's time to first token and generation
// over the run, at the height of its TTFT) and, with --gpu-telemetry URLs,
// gpu_utilization_and_throughput_over_time.png (output token throughput
// above each GPU's utilisation, on one time axis). AIPerf's timeslice plots
// need --slice-duration, which bench does not have; it skips them too
// without it.
func WritePlots(dir string, r Run) ([]string, error) {
	if len(byStart(r)) == 0 {
		return nil, nil // no successful request: nothing to plot
	}
	var plots []pngPlot
	if f := ttftOverTime(r); !f.empty() {
		plots = append(plots, pngPlot{"ttft_over_time.png", figureCanvas(f)})
	}
	if t := ttftTimeline(r); len(t.spans) > 0 {
		plots = append(plots, pngPlot{"ttft_timeline.png", t.draw})
	}
	if tokens, gpus := gpuOverTime(r); !tokens.empty() && !gpus.empty() {
		plots = append(plots, pngPlot{"gpu_utilization_and_throughput_over_time.png", stacked(tokens, gpus)})
	}
	return writePNGs(filepath.Join(dir, PlotsDir), plots)
}

// WriteSweepPlots writes the PNG of AIPerf 0.13's multi-run default set
// that a one-trial sweep has data for into dir/plots: ttft_vs_throughput.png
// (average TTFT against request throughput, a marker per point labelled
// with its parameters). Its other defaults need the GPU count
// (pareto_curve_*) or several trials (latency_throughput_uncertainty).
func WriteSweepPlots(dir string, points []SweepPoint) ([]string, error) {
	f := figure{title: "TTFT vs Throughput", xLabel: "Time to First Token avg (ms)", yLabel: "Request Throughput avg (requests/sec)"}
	var curve []point
	var labels []string
	for _, p := range points {
		if p.Failed != "" || p.Run.Summary.TTFT.Count == 0 {
			continue
		}
		curve = append(curve, point{p.Run.Summary.TTFT.Avg * 1e3, p.Run.Summary.RequestThroughput})
		labels = append(labels, p.values())
	}
	if len(curve) == 0 {
		return nil, nil
	}
	f.series = []series{{label: points[0].names(), points: curve}, {label: "", points: curve, dots: true}}
	return writePNGs(filepath.Join(dir, PlotsDir), []pngPlot{{"ttft_vs_throughput.png", func(c draw.Canvas) error {
		p, _, err := f.plot()
		if err != nil {
			return err
		}
		xys := make(plotter.XYs, len(curve))
		for i, pt := range curve {
			xys[i].X, xys[i].Y = pt.x, pt.y
		}
		l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return err
		}
		l.Offset = vg.Point{X: vg.Points(4), Y: vg.Points(4)}
		for i := range l.TextStyle {
			l.TextStyle[i].Font = font.From(sans, 9)
		}
		p.Add(l)
		p.Title.Text = f.title
		pngLegend(p)
		p.Draw(c)
		return nil
	}}})
}

func writePNGs(dir string, plots []pngPlot) ([]string, error) {
	if len(plots) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var names []string
	for _, pp := range plots {
		c := vgimg.NewWith(vgimg.UseWH(pngW, pngH), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(color.White))
		if err := pp.draw(draw.New(c)); err != nil {
			return names, fmt.Errorf("%s: %w", pp.name, err)
		}
		f, err := os.Create(filepath.Join(dir, pp.name))
		if err != nil {
			return names, err
		}
		if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(f); err != nil {
			f.Close()
			return names, err
		}
		if err := f.Close(); err != nil {
			return names, err
		}
		names = append(names, pp.name)
	}
	return names, nil
}

// figureCanvas draws f, titled and with its legend, on a canvas.
func figureCanvas(f figure) func(draw.Canvas) error {
	return func(c draw.Canvas) error {
		p, err := pngFigure(f)
		if err != nil {
			return err
		}
		p.Draw(c)
		return nil
	}
}

// pngFigure lays f out for a PNG: titled, with its legend in the plot.
func pngFigure(f figure) (*plot.Plot, error) {
	p, _, err := f.plot()
	if err != nil {
		return nil, err
	}
	p.Title.Text = f.title
	pngLegend(p)
	return p, nil
}

// pngLegend puts p's legend at its top right, in the charts' face.
func pngLegend(p *plot.Plot) {
	p.Legend.Top = true
	p.Legend.TextStyle.Font = font.From(sans, 9)
}

// stacked draws top above bottom on one time axis.
func stacked(top, bottom figure) func(draw.Canvas) error {
	return func(c draw.Canvas) error {
		var plots []*plot.Plot
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, f := range []figure{top, bottom} {
			p, err := pngFigure(f)
			if err != nil {
				return err
			}
			lo, hi = min(lo, p.X.Min), max(hi, p.X.Max)
			plots = append(plots, p)
		}
		tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadY: vg.Points(6)}
		for i, p := range plots {
			p.X.Min, p.X.Max = lo, hi
			p.Draw(tiles.At(c, 0, i))
		}
		return nil
	}
}

// byStart are the run's successful requests in the order sent.
func byStart(r Run) []int {
	var idx []int
	for i, q := range r.Requests {
		if q.Outcome == record.OutcomeOK && !q.Sent.IsZero() {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return r.Requests[a].Sent.Compare(r.Requests[b].Sent) })
	return idx
}

// ttftOverTime is AIPerf's ttft_over_time: each successful request's TTFT
// against its number, in the order sent.
func ttftOverTime(r Run) figure {
	var pts []point
	for n, i := range byStart(r) {
		if q := r.Requests[i]; q.HasTTFT {
			pts = append(pts, point{float64(n + 1), q.TTFT.Seconds() * 1e3})
		}
	}
	return figure{title: "TTFT Per Request Over Time", xLabel: "Request Number", yLabel: "Time to First Token (ms)",
		series: []series{{label: "time_to_first_token", points: pts, dots: true}}}
}

// requestTimeline is AIPerf's ttft_timeline: a bar per request at the height of
// its TTFT, from its send to its first token (TTFT) and on to its end
// (generation), in seconds since the run's start.
type requestTimeline struct {
	spans []timelineSpan
}

type timelineSpan struct {
	y, start, first, end float64
}

func ttftTimeline(r Run) requestTimeline {
	var t requestTimeline
	for _, i := range byStart(r) {
		q := r.Requests[i]
		if !q.HasTTFT {
			continue
		}
		start := q.Sent.Sub(r.Summary.Start).Seconds()
		t.spans = append(t.spans, timelineSpan{y: q.TTFT.Seconds() * 1e3, start: start,
			first: start + q.TTFT.Seconds(), end: start + q.Duration.Seconds()})
	}
	return t
}

var (
	ttftColor = palette[0]
	genColor  = palette[2]
)

func (t requestTimeline) draw(c draw.Canvas) error {
	p := plot.New()
	styleText(p)
	p.Title.Text = "Request Timeline: TTFT Phases Over Time"
	p.X.Label.Text, p.Y.Label.Text = "Time since start (s)", "Time to First Token (ms)"
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.TickerFunc(linearTicks), plot.TickerFunc(linearTicks)
	p.Add(plotter.NewGrid())
	p.Add(t)
	pngLegend(p)
	ttft, gen := plotter.NewFunction(func(float64) float64 { return 0 }), plotter.NewFunction(func(float64) float64 { return 0 })
	ttft.LineStyle = draw.LineStyle{Color: ttftColor, Width: vg.Points(3)}
	gen.LineStyle = draw.LineStyle{Color: genColor, Width: vg.Points(3)}
	p.Legend.Add("TTFT", ttft)
	p.Legend.Add("generation", gen)
	p.Draw(c)
	return nil
}

// Plot draws each request's two phases as horizontal bars.
func (t requestTimeline) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, s := range t.spans {
		y := trY(s.y)
		for _, ph := range []struct {
			from, to float64
			color    color.Color
		}{{s.start, s.first, ttftColor}, {s.first, s.end, genColor}} {
			c.StrokeLine2(draw.LineStyle{Color: ph.color, Width: vg.Points(2)}, trX(ph.from), y, trX(ph.to), y)
		}
	}
}

// DataRange is the span of every bar.
func (t requestTimeline) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin = t.spans[0].start, t.spans[0].y
	xmax, ymax = t.spans[0].end, t.spans[0].y
	for _, s := range t.spans {
		xmin, xmax = min(xmin, s.start), max(xmax, s.end)
		ymin, ymax = min(ymin, s.y), max(ymax, s.y)
	}
	return min(xmin, 0), xmax, min(ymin, 0), ymax
}

// gpuOverTime are AIPerf's gpu_utilization_and_throughput_over_time in
// two panels: output token throughput over the run, and each GPU's
// utilisation as the DCGM exporter endpoints read it.
func gpuOverTime(r Run) (tokens, gpus figure) {
	tok, _, _ := overTime(r)
	tokens = figure{title: "Output Token Throughput with GPU Utilization", xLabel: "Time since start (s)", yLabel: "tokens/s",
		series: []series{{label: "output token throughput", points: tok}}}
	gpus = figure{xLabel: "Time since start (s)", yLabel: "GPU utilization (%)", percent: true}
	if r.GPUEndpoints == nil {
		return tokens, gpus
	}
	index := map[string]int{}
	for _, rec := range r.GPUEndpoints.Records {
		v, ok := rec.Values["nvidia_gpu_utilization"]
		at := rec.At.Sub(r.Summary.Start)
		if !ok || at < 0 || rec.At.After(r.Summary.End.Add(time.Second)) {
			continue
		}
		name := gputelemetry.Display(rec.Source) + " gpu " + strconv.Itoa(rec.Index)
		i, seen := index[name]
		if !seen {
			i = len(gpus.series)
			index[name] = i
			gpus.series = append(gpus.series, series{label: name})
		}
		gpus.series[i].points = append(gpus.series[i].points, point{at.Seconds(), v})
	}
	return tokens, gpus
}
