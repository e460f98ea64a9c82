// Command alert-backtest evaluates Prometheus alerting rules over recorded
// probe requests, in simulated time, and prints when each alert fired.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/inferprobe/inferprobe/alerts/backtest"
)

const help = `Evaluates Prometheus rules over recorded probe requests, in simulated time, and prints each
alert's firings on stdout, one JSON object a line, in order of start:

  {"alert": NAME, "severity": S, "labels": {...}, "start": UNIX_SECONDS, "end": UNIX_SECONDS or null}

start is when the alert began firing (after its for), end when it stopped (after its
keep_firing_for), null when it still fired at the last record. Progress goes to stderr.

The records go through inferprobe's own request metrics (labels target, model,
scenario="backtest", phase="probe"), which a simulated scrape (job="inferprobe",
instance="inferprobe:9464") stores every --scrape-interval into a Prometheus TSDB; Prometheus's
own rule groups evaluate the rules at each group's interval with the real PromQL engine, so for
and keep_firing_for are Prometheus's. Scrapes and evaluations fall on multiples of their
intervals (Unix time); at one instant the records that ended by then come first, then the
scrape, then the groups in file order.

--records is a CSV whose first line is exactly
  unix_seconds,target,model,ttft_seconds,itl_seconds,latency_seconds,outcome,good
then one request a line, in order of unix_seconds (when the request ended): ttft_seconds and
itl_seconds empty when absent (itl always for an error), outcome ok or error, good 1 when the
request counts as good for goodput (an ok request that met its SLO), else 0. For example
  1764806400.25,vllm-a,llama-3-8b,0.180,0.021,2.400,ok,1
  1764806401.1,vllm-a,llama-3-8b,,,30,error,0
A file ending in .jsonl, or starting with {, is read as bench's (or AIPerf's) profile_export.jsonl instead, replayed
at its requests' end times, under --target and --model.

Exit status: 0 done, 1 the records or rules could not be evaluated, 2 bad usage.

Example:
  make alert-backtest RULES=alerts/inferprobe-rules.yml RECORDS=records.csv`

func main() {
	app := kingpin.New("alert-backtest", help)
	app.HelpFlag.Short('h')
	ruleFiles := app.Flag("rules", "A Prometheus rule file; repeat for more.").Required().ExistingFiles()
	records := app.Flag("records", "The records: a CSV as above, or a profile_export.jsonl.").Required().ExistingFile()
	classicOnly := app.Flag("classic-only", "Ingest as a Prometheus without native histograms: only the classic _bucket, _sum and _count series.").Bool()
	scrapeInterval := app.Flag("scrape-interval", "Simulated time between scrapes.").Default("15s").Duration()
	evaluationInterval := app.Flag("evaluation-interval", "The interval of rule groups that set none.").Default("1m").Duration()
	target := app.Flag("target", "The target label of a profile_export.jsonl's requests.").Default("bench").String()
	model := app.Flag("model", "The model label of a profile_export.jsonl's requests.").Default("").String()
	if _, err := app.Parse(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "alert-backtest: %v (see --help)\n", err)
		os.Exit(2)
	}
	if *scrapeInterval <= 0 || *evaluationInterval <= 0 {
		fmt.Fprintln(os.Stderr, "alert-backtest: --scrape-interval and --evaluation-interval must be positive")
		os.Exit(2)
	}
	if os.Getenv("GOGC") == "" {
		// The run allocates briskly but holds little (the rules' lookback
		// of samples): collecting less often saves about a fifth of its time.
		debug.SetGCPercent(400)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := run(ctx, *records, *target, *model, os.Stdout, backtest.Options{
		RuleFiles: *ruleFiles, ClassicOnly: *classicOnly, ScrapeInterval: *scrapeInterval,
		EvaluationInterval: *evaluationInterval, Progress: os.Stderr,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "alert-backtest:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, records, target, model string, out io.Writer, opt backtest.Options) error {
	f, err := os.Open(records)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var probes iter.Seq2[backtest.Probe, error]
	if isJSONL(records, r) {
		probes = labelled(backtest.ReadProfileExport(r), target, model)
	} else {
		probes = backtest.ReadCSV(r)
	}
	start := time.Now()
	firings, err := backtest.Run(ctx, probes, opt)
	if err != nil {
		return fmt.Errorf("%s: %w", records, err)
	}
	fmt.Fprintf(opt.Progress, "alert-backtest: %d firings, in %v\n", len(firings), time.Since(start).Round(time.Millisecond))
	return writeFirings(out, firings)
}

// isJSONL says whether the records are a profile_export.jsonl: by their
// name, or by a first line that is a JSON object where a CSV would have its
// header.
func isJSONL(name string, r *bufio.Reader) bool {
	if strings.EqualFold(filepath.Ext(name), ".jsonl") {
		return true
	}
	first, _ := r.Peek(1)
	return len(first) == 1 && first[0] == '{'
}

// labelled gives probes, which name no target or model, these ones.
func labelled(probes iter.Seq2[backtest.Probe, error], target, model string) iter.Seq2[backtest.Probe, error] {
	return func(yield func(backtest.Probe, error) bool) {
		for p, err := range probes {
			p.Target, p.Model = target, model
			if !yield(p, err) {
				return
			}
		}
	}
}

// firingLine is a firing as printed.
type firingLine struct {
	Alert    string            `json:"alert"`
	Severity string            `json:"severity"`
	Labels   map[string]string `json:"labels"`
	Start    float64           `json:"start"`
	End      *float64          `json:"end"`
}

func writeFirings(w io.Writer, firings []backtest.Firing) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, f := range firings {
		line := firingLine{Alert: f.Alert, Severity: f.Severity, Labels: f.Labels, Start: unixSeconds(f.Start)}
		if f.End != nil {
			end := unixSeconds(*f.End)
			line.End = &end
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
