package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/report/export"
	"github.com/inferprobe/inferprobe/scenarios"
)

// exportConfig is the run's configuration for the artifacts, from the
// scenario it runs (cfg), limit the length it was given and warmup its
// warmup's; it never carries the API key.
func (f *benchFlags) exportConfig(limit, warmup prober.Limit, cfg *scenarios.Config) export.Config {
	probe := cfg.Probes["bench"]
	target := cfg.Targets[probe.Target]
	bases, _ := f.targetURLs() // validated before the run
	c := export.Config{
		Model: target.Model, EndpointType: f.endpointType, Streaming: f.streaming, URLs: bases, Seed: cfg.Global.Seed,
		ExtraInputs: probe.Params, WarmupRequests: int(warmup.Requests),
		RequestCount: int(limit.Requests), Duration: limit.Duration.Seconds(), Command: repeatCommand(f.args),
		FixedSchedule: f.replays(), ServerMetrics: f.server.exportConfig(),
		AutoPlot: f.autoPlot, PlotRequired: f.plotRequired, SliceDuration: f.sliceDuration,
	}
	c.SetDataset(probe.Dataset)
	// AIPerf writes the tokenizer it was given, a model's name or a path.
	if target.Tokenizer != "" {
		c.Tokenizer = f.tokenizer
		if *f.set["tokenizer-revision"] {
			c.TokenizerRevision = f.tokenizerRevision
		}
	}
	if *f.set["request-rate"] {
		c.RequestRate, c.ArrivalPattern = f.requestRate, f.arrivalPattern
	}
	if *f.set["request-rate-series"] {
		c.ArrivalPattern = f.arrivalPattern
		points, _ := readRateSeries(f.load.rateSeries) // read before the run
		for _, p := range points {
			c.RateSeries = append(c.RateSeries, export.RatePoint{TimeS: *p.TimeS, QPS: *p.QPS})
		}
	}
	if f.users.given() {
		c.RequestRate, c.Users = f.users.rate, f.users.users
	}
	c.PrefillConcurrency = probe.Arrival.MaxPrefillConcurrency
	if *f.set["concurrency"] || !*f.set["request-rate"] && !*f.set["request-rate-series"] && !f.users.given() {
		c.Concurrency = max(f.concurrency, 1)
	}
	if warmup != (prober.Limit{}) {
		f.load.warmup.export(f, warmup, &c)
	}
	return c
}

var unsafePath = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// defaultArtifactDir is AIPerf's artifacts/MODEL-ENDPOINT-LOAD naming, e.g.
// artifacts/Qwen_Qwen3-0.6B-chat-concurrency1.
func defaultArtifactDir(f *benchFlags) string {
	load := "concurrency" + strconv.Itoa(max(f.concurrency, 1))
	// A rate phase is named by its concurrency limit, when one is given,
	// and its rate at the start.
	rateLoad := func(rate float64) string {
		name := "request_rate" + pythonFloat(rate)
		if *f.set["concurrency"] {
			name = "concurrency" + strconv.Itoa(f.concurrency) + "-" + name
		}
		return name
	}
	switch {
	case f.users.given():
		load = "user_centric-users" + strconv.Itoa(f.users.users) + "-qps" + pythonFloat(f.users.rate)
	case *f.set["request-rate"]:
		load = rateLoad(f.requestRate)
	case *f.set["request-rate-series"]:
		if points, err := readRateSeries(f.load.rateSeries); err == nil {
			load = rateLoad(*points[0].QPS)
		}
	case f.replays():
		load = "fixed_schedule"
	}
	return filepath.Join("artifacts", unsafePath.ReplaceAllString(f.model, "_")+"-"+f.endpointType+"-"+load)
}

// pythonFloat is x as Python prints a float, which AIPerf's names use: 10
// is "10.0".
func pythonFloat(x float64) string {
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// secrets are the credentials the run sends (scenarios.Target.Secrets).
func (f *benchFlags) secrets() []string {
	t := scenarios.Target{APIKey: f.apiKey, Headers: map[string]string{}}
	for _, h := range f.headers {
		if name, v, ok := strings.Cut(h, ":"); ok {
			t.Headers[name] = v
		}
	}
	return t.Secrets()
}

// repeatCommand is the command line that repeats the run, without the API
// key (it comes from INFERPROBE_API_KEY) and with credential headers
// redacted.
func repeatCommand(args []string) string {
	out := []string{"inferprobe"}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--api-key":
			i++
			continue
		case strings.HasPrefix(a, "--api-key="):
			continue
		case a == "-H" || a == "--header":
			if i+1 < len(args) {
				out = append(out, a, shellQuote(redactHeader(args[i+1])))
				i++
				continue
			}
		case strings.HasPrefix(a, "--header="):
			a = "--header=" + redactHeader(strings.TrimPrefix(a, "--header="))
		case strings.HasPrefix(a, "-H") && len(a) > 2:
			a = "-H" + redactHeader(a[2:])
		}
		out = append(out, shellQuote(a))
	}
	return strings.Join(out, " ")
}

func redactHeader(h string) string {
	if name, _, ok := strings.Cut(h, ":"); ok && scenarios.SensitiveHeader(name) {
		return name + ": REDACTED"
	}
	return h
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:=,+@%-]+$`)

func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// captured keeps what a run prints and logs, for its artifacts. The run's
// own goroutines (the GPU collector's) log into it while the main one
// prints.
type captured struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *captured) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

// take is what was written since the last take.
func (c *captured) take() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.buf.String()
	c.buf.Reset()
	return s
}
