package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/alecthomas/kingpin/v2"

	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/report/export"
	"github.com/inferprobe/inferprobe/servermetrics"
)

// serverMetricsFlags are AIPerf's server metrics options: the server's own
// Prometheus metrics, scraped during the run.
type serverMetricsFlags struct {
	on      bool
	urls    []string // given beside the discovered one
	formats []string
}

// serverFormats are the formats of AIPerf's --server-metrics-formats that
// bench writes; its default is both.
var serverFormats = []string{"json", "csv"}

func addServerMetricsFlags(flag func(name, help string) *kingpin.FlagClause) *serverMetricsFlags {
	s := &serverMetricsFlags{}
	flag("server-metrics", "Scrape the server's own Prometheus metrics during the run (on by default, from the target's origin + /metrics; vLLM, SGLang, llama-server --metrics and TGI are summarised beside the client's figures) and write server_metrics_export.json and .csv; URLs after it are scraped too (host:port or a URL; /metrics is added). --no-server-metrics turns it off. A server without them is noted, never an error.").Default("true").BoolVar(&s.on)
	flag("server-metrics-formats", "Server metrics files to write: json, csv (default both), several after one flag.").StringsVar(&s.formats)
	return s
}

// values takes the values that follow --server-metrics and
// --server-metrics-formats, as AIPerf's list options take them.
func (s *serverMetricsFlags) values(more map[string]func(string) error) {
	more["server-metrics"] = func(v string) error { s.urls = append(s.urls, v); return nil }
	more["server-metrics-formats"] = func(v string) error { s.formats = append(s.formats, v); return nil }
}

// options are what the run scrapes; ok is false with --no-server-metrics.
// apiBases are the target's URLs, whose origins serve the discovered
// metrics: every one's, as AIPerf scrapes each --url's.
func (s *serverMetricsFlags) options(apiBases []string) (o servermetrics.Options, ok bool, err error) {
	if !s.on {
		if len(s.urls) > 0 {
			return o, false, fmt.Errorf("--no-server-metrics with --server-metrics URLs: use one or the other")
		}
		return o, false, nil
	}
	for _, f := range s.formats {
		if !slices.Contains(serverFormats, f) && f != "jsonl" && f != "parquet" {
			return o, false, fmt.Errorf("--server-metrics-formats %s: choose from json, csv (jsonl, parquet: AIPerf's, not written here)", f)
		}
	}
	var extra []string
	for _, b := range apiBases[1:] {
		u, err := servermetrics.DiscoveredURL(b)
		if err != nil {
			return o, false, err
		}
		extra = append(extra, u)
	}
	if o, err = finite.ServerMetricsOptions(finite.ServerMetricsSource{APIBase: apiBases[0], Extra: append(extra, s.urls...)}); err != nil {
		return o, false, err
	}
	return o, true, nil
}

// serverMetricsRun is the run's option that scrapes the server, nil with
// --no-server-metrics; it prints the notes on the formats, or why the flags
// cannot be used (then ok is false).
func (f *benchFlags) serverMetricsRun(stderr io.Writer) (opt finite.Option, ok bool) {
	bases, _ := f.targetURLs() // validated when the run was planned
	o, on, err := f.server.options(bases)
	if err != nil {
		fmt.Fprintf(stderr, "inferprobe bench: %v\n", err)
		return nil, false
	}
	for _, n := range f.server.notes() {
		fmt.Fprintf(stderr, "inferprobe bench: note: %s\n", n)
	}
	if on {
		opt = finite.WithServerMetrics(o)
	}
	return opt, true
}

// notes are said once before the run: the formats given that are not written.
func (s *serverMetricsFlags) notes() []string {
	var skipped []string
	for _, f := range s.formats {
		if !slices.Contains(serverFormats, f) {
			skipped = append(skipped, f)
		}
	}
	if len(skipped) == 0 || !s.on {
		return nil
	}
	return []string{fmt.Sprintf("--server-metrics-formats %s: inferprobe writes server metrics as json and csv only", strings.Join(skipped, " "))}
}

// exportConfig is AIPerf's input_config.server_metrics of the run.
func (s *serverMetricsFlags) exportConfig() export.ServerMetricsConfig {
	c := export.ServerMetricsConfig{Enabled: s.on}
	if !s.on {
		return c
	}
	for _, u := range s.urls {
		c.URLs = append(c.URLs, servermetrics.MetricsURL(u))
	}
	c.Formats = serverFormats
	if len(s.formats) > 0 {
		c.Formats = slices.DeleteFunc(slices.Clone(s.formats), func(f string) bool { return !slices.Contains(serverFormats, f) })
	}
	return c
}
