package export

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
)

// chartIDs are the charts every report holds, in page order.
var chartIDs = []string{
	"ttft-cdf", "ttft-hist", "latency-cdf", "latency-hist", "itl-cdf", "itl-hist", "isl-hist", "osl-hist",
	"ttft-time", "itl-time", "concurrency-time", "lag-time", "throughput-time", "requests-time",
}

// syntheticRun is a run of n streamed requests, sent 10 ms apart and 8 at
// a time at most, with log-normal TTFT around 100 ms, ITL around 10 ms,
// input lengths 100 to 299 and output lengths 16 to 79 tokens; one in a
// hundred fails with HTTP 500.
func syntheticRun(n int) Run {
	rng := rand.New(rand.NewPCG(7, 7))
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := report.NewReport()
	for i := range n {
		sched := t0.Add(time.Duration(i) * 10 * time.Millisecond)
		ttft := time.Duration(100e6 * math.Exp(0.3*rng.NormFloat64()))
		out := 16 + rng.IntN(64)
		rec := &record.Record{Seq: uint64(i), Scheduled: sched, Sent: sched.Add(time.Duration(rng.IntN(200)) * time.Microsecond),
			FirstOutput: 0, FirstChunkTokens: 1, InputTokens: 100 + rng.IntN(200), OutputTokens: out,
			Outcome: record.OutcomeOK, Status: 200, TokenSource: record.TokensFromUsage}
		itl := time.Duration(10e6 * math.Exp(0.2*rng.NormFloat64()))
		rec.Chunks = []time.Duration{ttft, ttft + time.Duration(out-1)*itl}
		rec.Duration = rec.Chunks[1] + time.Millisecond
		if i%100 == 99 {
			rec.Chunks, rec.InputTokens, rec.OutputTokens = nil, 0, 0
			rec.Outcome, rec.Reason, rec.Status, rec.Err, rec.Duration = record.OutcomeError, record.ReasonHTTP5xx, 500, "HTTP 500: overloaded", 5*time.Millisecond
		}
		r.Observe(rec)
	}
	return Run{Summary: r.Summary(), Requests: r.Requests(),
		Config: Config{Model: "m", EndpointType: "chat", Streaming: true, Concurrency: 8, RequestCount: n}}
}

// checkHTML fails unless b tokenizes as HTML whose elements all close in
// order (void elements and self-closed SVG elements aside), and returns
// the ids of the figures that hold an <svg>.
func checkHTML(t *testing.T, b []byte) (charts []string) {
	t.Helper()
	void := map[string]bool{"meta": true, "br": true, "hr": true, "img": true, "input": true, "link": true, "wbr": true}
	z := html.NewTokenizer(bytes.NewReader(b))
	var open []string
	figure := ""
	for {
		switch z.Next() {
		case html.ErrorToken:
			if z.Err() != io.EOF {
				t.Fatalf("HTML: %v", z.Err())
			}
			if len(open) > 0 {
				t.Fatalf("HTML: %v left open", open)
			}
			return charts
		case html.StartTagToken:
			name, attrs := z.TagName()
			if void[string(name)] {
				continue
			}
			open = append(open, string(name))
			for attrs {
				var k, v []byte
				k, v, attrs = z.TagAttr()
				if string(name) == "figure" && string(k) == "id" {
					figure = string(v)
				}
			}
			if string(name) == "svg" && figure != "" {
				charts = append(charts, figure)
				figure = ""
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if len(open) == 0 || open[len(open)-1] != string(name) {
				t.Fatalf("HTML: </%s> closes %v", name, open)
			}
			open = open[:len(open)-1]
		}
	}
}

// TestHTMLPage: the page is well-formed HTML, holds every chart, and
// reaches nothing outside itself.
func TestHTMLPage(t *testing.T) {
	for name, run := range map[string]Run{"fixed": fixedRun(t), "synthetic": syntheticRun(2000)} {
		t.Run(name, func(t *testing.T) {
			b, err := HTML(run)
			if err != nil {
				t.Fatal(err)
			}
			if got := checkHTML(t, b); !slices.Equal(got, chartIDs) {
				t.Errorf("charts %v, want %v", got, chartIDs)
			}
			for _, bad := range []string{"<script", "src=", "href=", "@import", "url(", "<?xml"} {
				if bytes.Contains(b, []byte(bad)) {
					t.Errorf("report contains %q", bad)
				}
			}
			if bytes.Contains(b, []byte(`id="compare"`)) {
				t.Error("a comparison without a baseline")
			}
		})
	}
}

// TestHTMLEmptyRun: a run in which nothing was measured still gives a page,
// with each chart saying it has no samples.
func TestHTMLEmptyRun(t *testing.T) {
	b, err := HTML(Run{})
	if err != nil {
		t.Fatal(err)
	}
	if got := checkHTML(t, b); len(got) != 0 {
		t.Errorf("charts drawn without data: %v", got)
	}
	if n := bytes.Count(b, []byte("No samples.")); n != len(chartIDs) {
		t.Errorf("%d charts say they have no samples, want %d", n, len(chartIDs))
	}
}

// TestHTMLCompare: with a baseline the page has the comparison, its rules'
// verdicts and the baseline's percentiles on the CDFs.
func TestHTMLCompare(t *testing.T) {
	run := syntheticRun(500)
	base := run.Metrics()
	base["time_to_first_token"]["p99"] /= 2 // TTFT p99 doubled since
	rules, err := ParseRules([]string{"time_to_first_token.p99>10%", "request_throughput<-50%"})
	if err != nil {
		t.Fatal(err)
	}
	run.Baseline = &Baseline{Path: "base/profile_export_inferprobe.json", Metrics: base, Rules: rules}
	b, err := HTML(run)
	if err != nil {
		t.Fatal(err)
	}
	checkHTML(t, b)
	page := string(b)
	for _, want := range []string{`id="compare"`, "base/profile_export_inferprobe.json",
		"<td>time_to_first_token.p99</td>", "100.0%</td>",
		`<tr class="fail"><td>time_to_first_token.p99&gt;10%</td>`, "<td>request_throughput&lt;-50%</td>", "<td>pass</td>", "baseline p1…p99"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	var cdfs int
	for _, s := range sections(run) {
		for _, f := range s.figures {
			for _, ser := range f.series {
				if ser.dots {
					cdfs++
					if f.id == "ttft-cdf" && ser.points[len(ser.points)-1] != (point{base["time_to_first_token"]["p99"], 99}) {
						t.Errorf("the baseline's TTFT p99 is marked at %v, want (%v, 99)", ser.points[len(ser.points)-1], base["time_to_first_token"]["p99"])
					}
				}
			}
		}
	}
	if cdfs != 3 {
		t.Errorf("baseline marked on %d CDFs, want 3", cdfs)
	}

	unknown, _ := ParseRules([]string{"no_such_metric>5"})
	run.Baseline.Rules = unknown
	if b, err = HTML(run); err != nil || !bytes.Contains(b, []byte("could not be judged")) {
		t.Errorf("a rule that cannot be judged is not said to be (%v)", err)
	}
}

// figureOf returns the chart id of r's page.
func figureOf(t *testing.T, r Run, id string) figure {
	t.Helper()
	for _, s := range sections(r) {
		for _, f := range s.figures {
			if f.id == id {
				return f
			}
		}
	}
	t.Fatalf("no chart %s", id)
	return figure{}
}

// TestTTFTHistogram: a known TTFT distribution lands in the right bars of
// the log histogram: 90 requests at 100 ms, 9 at 1.2 s and one at 10 s
// span two decades, cut into ten bars for a hundred requests.
func TestTTFTHistogram(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := report.NewReport()
	for i := range 100 {
		ttft := 100 * time.Millisecond
		switch {
		case i == 99:
			ttft = 10 * time.Second
		case i >= 90:
			ttft = 1200 * time.Millisecond
		}
		sent := t0.Add(time.Duration(i) * time.Millisecond)
		r.Observe(&record.Record{Seq: uint64(i), Scheduled: sent, Sent: sent, Chunks: []time.Duration{ttft}, Duration: ttft,
			FirstChunkTokens: 1, OutputTokens: 1, Outcome: record.OutcomeOK})
	}
	f := figureOf(t, Run{Summary: r.Summary(), Requests: r.Requests()}, "ttft-hist")
	if !f.logX || len(f.bins) != 10 {
		t.Fatalf("log axis %v, %d bars; want a log axis and 10 bars", f.logX, len(f.bins))
	}
	for i, bin := range f.bins {
		want := map[int]float64{0: 90, 5: 9, 9: 1}[i]
		if bin.Weight != want {
			t.Errorf("bar %d [%.4g, %.4g) ms holds %v requests, want %v", i, bin.Min, bin.Max, bin.Weight, want)
		}
	}
	if lo, mid, hi := f.bins[0].Min, f.bins[5].Min, f.bins[9].Max; math.Abs(lo-100) > 1e-9 || math.Abs(mid-1000) > 1e-6 || math.Abs(hi-1e4) > 1e-6 {
		t.Errorf("bars run from %v via %v to %v ms, want 100, 1000 and 10 000", lo, mid, hi)
	}
	if barsFor(100_000) != histBins || barsFor(3) != 8 {
		t.Errorf("%d bars for 100 000 values, %d for 3; want %d and 8", barsFor(100_000), barsFor(3), histBins)
	}
}

// TestLinearBins: one bar per token count while there are few, else
// histBins bars of equal width that keep every request.
func TestLinearBins(t *testing.T) {
	bins := linearBins([]float64{8, 8, 8, 10})
	if len(bins) != 3 || bins[0].Weight != 3 || bins[1].Weight != 0 || bins[2].Weight != 1 || bins[0].Min != 7.5 {
		t.Errorf("bins of 8, 8, 8, 10: %+v", bins)
	}
	var wide []float64
	for v := range 1000 {
		wide = append(wide, float64(v))
	}
	bins = linearBins(wide)
	var sum float64
	for _, b := range bins {
		sum += b.Weight
	}
	if len(bins) != 20 || sum != 1000 {
		t.Errorf("0…999: %d bars holding %v, want 20 holding 1000", len(bins), sum)
	}
}

// TestCDFBounded: a CDF has a bounded number of vertices, which read the
// distribution right: 100 000 values 1…100 000 put the median at 50 000.
func TestCDFBounded(t *testing.T) {
	v := make([]float64, 100_000)
	for i := range v {
		v[i] = float64(i + 1)
	}
	pts := cdf(v)
	if len(pts) > 2*cdfGrid+10 {
		t.Errorf("%d vertices for 100 000 values", len(pts))
	}
	for _, p := range pts {
		if want := p.y / 100 * 1e5; math.Abs(p.x-want) > 1 {
			t.Errorf("CDF point (%v, %v%%), want x %v", p.x, p.y, want)
		}
	}
	if last := pts[len(pts)-1]; last != (point{1e5, 100}) {
		t.Errorf("the CDF ends at %v, want the maximum at 100%%", last)
	}
	if few := cdf([]float64{0, 2, 4}); !slices.Equal(few, []point{{2, 50}, {4, 100}}) {
		t.Errorf("CDF of 0, 2, 4 on a log axis: %v, want the positive values at 50%% and 100%%", few)
	}
}

// TestInFlight: requests in flight, per second of the run: two overlapping
// requests, then one alone.
func TestInFlight(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	req := func(from, d time.Duration) report.RequestRecord {
		return report.RequestRecord{Sent: t0.Add(from), Contribution: report.Contribution{HasLag: true, Duration: d, Outcome: record.OutcomeOK}}
	}
	run := Run{Summary: report.Summary{Start: t0, Duration: 3 * time.Second}, Requests: []report.RequestRecord{
		req(0, 2*time.Second), req(500*time.Millisecond, time.Second), req(2*time.Second, time.Second)}}
	f := figureOf(t, run, "concurrency-time")
	mean, peak := f.series[0].points, f.series[1].points
	if got := fmt.Sprint(mean); got != "[{0.5 1.5} {1.5 1.5} {2.5 1}]" {
		t.Errorf("mean in flight per second %s, want [{0.5 1.5} {1.5 1.5} {2.5 1}]", got)
	}
	if got := fmt.Sprint(peak); got != "[{0.5 2} {1.5 2} {2.5 1}]" {
		t.Errorf("most in flight per second %s, want [{0.5 2} {1.5 2} {2.5 1}]", got)
	}
}

// TestThroughputOverTimeSteady: a steady run, a request of 256 tokens
// ending every 0.7 s, has a steady output throughput, about 256/0.7
// tokens/s in every second but the ramp at either end; binned by end time
// its seconds would hold one or two requests' tokens, 256 or 512.
func TestThroughputOverTimeSteady(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const every, ttft, decode, n = 700 * time.Millisecond, 100 * time.Millisecond, 2560 * time.Millisecond, 40
	var reqs []report.RequestRecord
	for i := range n {
		reqs = append(reqs, report.RequestRecord{Sent: t0.Add(time.Duration(i) * every), Contribution: report.Contribution{
			HasLag: true, HasTTFT: true, TTFT: ttft, Duration: ttft + decode, OutputTokens: 256, Outcome: record.OutcomeOK}})
	}
	run := Run{Summary: report.Summary{Start: t0, Duration: (n-1)*every + ttft + decode}, Requests: reqs}
	pts := figureOf(t, run, "throughput-time").series[0].points
	want := 256 / every.Seconds()
	var total float64
	for _, p := range pts {
		total += p.y
		if p.x > (ttft+decode).Seconds()+1 && p.x < (n-1)*every.Seconds()-1 && math.Abs(p.y-want) > 0.1*want {
			t.Errorf("%.1f s: %.0f tokens/s, want about %.0f", p.x, p.y, want)
		}
	}
	if math.Abs(total-256*n) > 1e-6 {
		t.Errorf("%.1f tokens over the chart, want %d", total, 256*n)
	}
}

// TestLagOverTime: schedule lag is charted at the scheduled time, its
// maximum per second included.
func TestLagOverTime(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var reqs []report.RequestRecord
	for i, lag := range []time.Duration{time.Millisecond, 3 * time.Millisecond, 40 * time.Millisecond} {
		sched := t0.Add(time.Duration(i) * time.Second)
		reqs = append(reqs, report.RequestRecord{Scheduled: sched, Sent: sched.Add(lag),
			Contribution: report.Contribution{HasLag: true, Lag: lag, Duration: time.Millisecond, Outcome: record.OutcomeOK}})
	}
	f := figureOf(t, Run{Summary: report.Summary{Start: t0, Duration: 3 * time.Second}, Requests: reqs}, "lag-time")
	if got := fmt.Sprint(f.series[2].points); f.series[2].label != "max" || got != "[{0.5 1} {1.5 3} {2.5 40}]" {
		t.Errorf("%s of lag per second %s, want max [{0.5 1} {1.5 3} {2.5 40}]", f.series[2].label, got)
	}
}

// TestLogTicks: 1, 2 and 5 of each decade are labelled; a range inside a
// decade gets linear ticks.
func TestLogTicks(t *testing.T) {
	labels := func(lo, hi float64) string {
		var out []string
		for _, tk := range (logTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{3, 700, "5 10 20 50 100 200 500"},
		{0.08, 0.3, "0.1 0.2"},
		{80, 130, "80 100 120"},
	} {
		if got := labels(tc.lo, tc.hi); got != tc.want {
			t.Errorf("ticks of [%v, %v]: %s, want %s", tc.lo, tc.hi, got, tc.want)
		}
	}
}

// TestCountTicks: an axis of a few requests is not marked at half a request.
func TestCountTicks(t *testing.T) {
	for _, tk := range (countTicks{}).Ticks(0, 2) {
		if tk.Value != math.Trunc(tk.Value) {
			t.Errorf("tick at %v requests", tk.Value)
		}
	}
}

// BenchmarkHTML100k renders the report of a 100 000-request run and
// reports the page's size.
func BenchmarkHTML100k(b *testing.B) {
	run := syntheticRun(100_000)
	var size int
	for b.Loop() {
		page, err := HTML(run)
		if err != nil {
			b.Fatal(err)
		}
		size = len(page)
	}
	b.ReportMetric(float64(size), "page-bytes")
}

// TestLogChartOneValueBelowOneMs: a log-scale chart of one value under a
// millisecond (a cut run's one inter-token gap) draws, rather than taking
// its axis below zero.
func TestLogChartOneValueBelowOneMs(t *testing.T) {
	f := figure{id: "itl-cdf", title: "ITL", logX: true, percent: true, series: []series{{label: "ITL", points: []point{{0.74, 0}, {0.74, 100}}}}}
	if d, err := f.draw(); err != nil || d.SVG == "" {
		t.Errorf("drawn %d bytes, %v", len(d.SVG), err)
	}
}
