package main

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/report/export"
	"github.com/inferprobe/inferprobe/scenarios"
)

func TestRepeatCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--model", "m", "--api-key", "sk-secret", "--streaming"}, "inferprobe bench --model m --streaming"},
		{[]string{"bench", "--api-key=sk-secret", "-H", "Authorization: Bearer sk-secret", "-H", "X-Team: sre"},
			"inferprobe bench -H 'Authorization: REDACTED' -H 'X-Team: sre'"},
		{[]string{"bench", "--header=X-Api-Key: sk-secret", "--goodput", "time_to_first_token:500 inter_token_latency:50"},
			"inferprobe bench '--header=X-Api-Key: REDACTED' --goodput 'time_to_first_token:500 inter_token_latency:50'"},
	} {
		got := repeatCommand(tc.args)
		if got != tc.want {
			t.Errorf("repeatCommand(%q) =\n %s\nwant\n %s", tc.args, got, tc.want)
		}
		if strings.Contains(got, "sk-secret") {
			t.Errorf("the key leaked: %s", got)
		}
	}
}

func TestDefaultArtifactDir(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{blogStatic, "artifacts/Qwen_Qwen3-0.6B-chat-concurrency1"},
		{blogPoisson, "artifacts/Qwen_Qwen3-0.6B-chat-request_rate10.0"},
		{[]string{"--model", "m", "--concurrency", "8", "--endpoint-type", "completions"}, "artifacts/m-completions-concurrency8"},
		// AIPerf's names, from its resolver: a rate as Python prints a
		// float, a concurrency limit of a rate phase before it.
		{[]string{"--model", "m", "--request-rate", "2.5", "--concurrency", "4"}, "artifacts/m-chat-concurrency4-request_rate2.5"},
	} {
		if got := defaultArtifactDir(parseBench(t, tc.args...)); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.args, got, tc.want)
		}
	}
}

func TestProgressLine(t *testing.T) {
	t0 := time.Unix(0, 0)
	r := report.NewReport()
	for i := range 30 {
		rec := &record.Record{Seq: uint64(i), Scheduled: t0, Sent: t0, Duration: time.Millisecond}
		if i%10 == 0 {
			rec.Outcome, rec.Reason = record.OutcomeError, record.ReasonHTTP5xx
		}
		r.Observe(rec)
	}
	for _, tc := range []struct {
		limit prober.Limit
		want  string
	}{
		{prober.Limit{Requests: 120}, "profiling: 30/120 requests (25%), 3.0 req/s, 3 errors, elapsed 10s, ETA 30s"},
		{prober.Limit{Duration: time.Minute}, "profiling: 30 requests done, 10s of 1m0s, 3.0 req/s, 3 errors, elapsed 10s, ETA 50s"},
	} {
		var out bytes.Buffer
		p := newProgress(&out, progressTTY, "profiling", tc.limit, time.Time{})
		p.start = t0
		p.now = func() time.Time { return t0.Add(10 * time.Second) }
		p.update(r)
		if want := "\r\033[K" + tc.want; out.String() != want {
			t.Errorf("tty progress %q, want %q", out.String(), want)
		}
		out.Reset()
		p.mode, p.lastPlain = progressPlain, t0
		p.update(r)
		if out.String() != tc.want+"\n" {
			t.Errorf("plain progress %q, want %q", out.String(), tc.want+"\n")
		}
	}
}

// TestBenchLimitsMustEnd: a zero or negative limit would mean "no limit" to
// the prober, and the run would never end; it is a flag error instead.
func TestBenchLimitsMustEnd(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "m", "--request-count", "0"}, "--request-count 0: must be at least 1"},
		{[]string{"--model", "m", "--benchmark-duration", "0"}, "--benchmark-duration 0: must be a number of seconds > 0"},
		{[]string{"--model", "m", "--benchmark-duration=-3"}, "--benchmark-duration -3: must be"},
	} {
		var stdout, stderr bytes.Buffer
		code := runBench(nil, &stdout, &stderr, parseBench(t, tc.args...), nil, nil)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// TestCompareRuleCheckedBeforeRun: a relative rule on a metric the baseline
// lacks is refused before anything is sent, not after the whole run.
func TestCompareRuleCheckedBeforeRun(t *testing.T) {
	base := filepath.Join(t.TempDir(), "base.json")
	if err := os.WriteFile(base, []byte(`{"time_to_first_token":{"unit":"ms","avg":100,"p99":200}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	missing := filepath.Join(t.TempDir(), "nope.json")
	if code := runBench(nil, &stdout, &stderr, parseBench(t, "--model", "m", "--compare", missing), nil, nil); code != 2 ||
		!strings.Contains(stderr.String(), "give the profile_export_aiperf.json of an earlier run") {
		t.Errorf("missing baseline: exit %d, %q; want exit 2 and what to give", code, stderr.String())
	}
	stderr.Reset()
	f := parseBench(t, "--model", "m", "--compare", base, "--compare-fail", "time_to_first_tokn.p99>10%")
	if code := runBench(nil, &stdout, &stderr, f, nil, nil); code != 2 ||
		!strings.Contains(stderr.String(), "has no time_to_first_tokn.p99; metrics there: time_to_first_token") {
		t.Errorf("exit %d, %q; want exit 2 naming the metrics the baseline has", code, stderr.String())
	}
}

// TestNoCredentialInErrors: flag errors do not echo a header value or a URL
// password, and servers that echo the key do not put it in the artifacts.
func TestNoCredentialInErrors(t *testing.T) {
	_, err := parseBench(t, "--model", "m", "-H", "Authorization Bearer sk-header-secret").scenario()
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "'Name: value'") {
		t.Errorf("-H without a colon: %v", err)
	}
	if _, err := baseURL("http://user:pa ss-secret@host:8000", "chat"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("bad --url: %v", err)
	}

	f := parseBench(t, "--model", "m", "--api-key", "sk-flag-secret", "-H", "Authorization: Bearer sk-header-secret",
		"-H", "X-Api-Key: xk-other-secret", "-H", "X-Team: sre")
	failed := report.Contribution{Outcome: record.OutcomeError}
	reqs := []report.RequestRecord{
		{Seq: 0, Contribution: failed, Status: 401, Err: `HTTP 401: {"error":"invalid key sk-flag-secret"}`},
		{Seq: 1, Contribution: failed, Status: 401, Err: `HTTP 401: bad header "Bearer sk-header-secret" and xk-other-secret for sre`},
		{Seq: 2},
	}
	got := export.ScrubErrors(reqs, f.secrets())
	for _, q := range got {
		if strings.Contains(q.Err, "secret") {
			t.Errorf("error message keeps a credential: %s", q.Err)
		}
	}
	if want := `HTTP 401: bad header "REDACTED" and REDACTED for sre`; got[1].Err != want {
		t.Errorf("scrubbed %q, want %q", got[1].Err, want)
	}
}

// TestExportConfigInputFile: input_config's request_count is what the run
// sends: one pass over --input-file, not the default of 10.
func TestExportConfigInputFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "prompts.jsonl")
	if err := os.WriteFile(file, []byte("{\"text\":\"a\"}\n{\"text\":\"b\"}\n\n{\"text\":\"c\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	requests := func(args ...string) int {
		f := parseBench(t, append([]string{"--model", "m", "--input-file", file}, args...)...)
		sc, err := f.scenario()
		if err == nil {
			err = scenarios.Check(sc.cfg, "bench", sc.written)
		}
		if err != nil {
			t.Fatal(err)
		}
		target, err := prober.NewTarget("bench", sc.cfg.Targets["bench"])
		if err != nil {
			t.Fatal(err)
		}
		plan, err := finite.NewPlan(finite.Spec{Name: "bench", Probe: sc.cfg.Probes["bench"], Target: target, Shard: record.Shard{Count: 1}, Limit: f.limit()})
		if err != nil {
			t.Fatal(err)
		}
		c := f.exportConfig(plan.Limit, prober.Limit{}, sc.cfg)
		// AIPerf's input_config names a file dataset "file", with AIPerf's
		// name of its format.
		if c.Dataset != "file" || c.DatasetPath != file || c.DatasetFormat != "single_turn" {
			t.Errorf("dataset %q at %q as %q, want file at %s as single_turn", c.Dataset, c.DatasetPath, c.DatasetFormat, file)
		}
		return c.RequestCount
	}
	if got := requests(); got != 10 {
		t.Errorf("request_count %d, want AIPerf's 10, cycling the file's 3 entries", got)
	}
	if got := requests("--request-count", "7"); got != 7 {
		t.Errorf("request_count %d, want --request-count's 7", got)
	}
}

// TestProgressNote: a note replaces the live line on a terminal and stands
// on its own line everywhere.
func TestProgressNote(t *testing.T) {
	for mode, want := range map[string]string{progressTTY: "\r\033[Kinterrupted\n", progressPlain: "interrupted\n", progressOff: "interrupted\n"} {
		var out bytes.Buffer
		newProgress(&out, mode, "profiling", prober.Limit{Requests: 1}, time.Time{}).note("interrupted")
		if out.String() != want {
			t.Errorf("%s: %q, want %q", mode, out.String(), want)
		}
	}
}

// TestProgressLineLive: the measured requests' TTFT and ITL p50/p99 and the
// output throughput so far are on the line.
func TestProgressLineLive(t *testing.T) {
	t0 := time.Unix(0, 0)
	r, live := report.NewReport(), &liveStats{}
	for i := range 100 {
		ttft := time.Duration(100+i) * time.Millisecond // p50 149-150 ms, p99 198-199 ms
		rec := &record.Record{Seq: uint64(i), Scheduled: t0, Sent: t0, Duration: time.Second, OutputTokens: 11, FirstChunkTokens: 1,
			Chunks: []time.Duration{ttft, ttft + 50*time.Millisecond}} // ITL 50ms/10 = 5 ms, to within a bucket
		r.Observe(rec)
		live.Observe(rec)
	}
	p := newProgress(io.Discard, progressPlain, "profiling", prober.Limit{Requests: 200}, time.Time{})
	p.start, p.live = t0, live
	got := p.line(r, t0.Add(10*time.Second))
	want := "profiling: 100/200 requests (50%), 10.0 req/s, 0 errors, TTFT p50 150ms p99 198ms, ITL p50 4.98ms p99 4.98ms, 110.0 output tok/s, elapsed 10s, ETA 10s"
	if got != want {
		t.Errorf("progress line\n %s\nwant\n %s", got, want)
	}
}

// TestLiveHistQuantile: the live quantiles are within the buckets' 0.5 % of
// the exact ones, from microseconds to a thousand seconds.
func TestLiveHistQuantile(t *testing.T) {
	for _, scale := range []time.Duration{time.Microsecond, time.Millisecond, time.Second} {
		var h liveHist
		for i := 1; i <= 1000; i++ {
			h.add(time.Duration(i) * scale)
		}
		for q, exact := range map[float64]time.Duration{0.5: 500 * scale, 0.99: 990 * scale} {
			got := h.quantile(q)
			if diff := math.Abs(float64(got-exact)) / float64(exact); diff > 0.006 {
				t.Errorf("scale %v: q%.2f = %v, exact %v (%.2f%% off)", scale, q, got, exact, 100*diff)
			}
		}
	}
}
