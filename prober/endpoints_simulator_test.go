package prober_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferprobe/inferprobe/collector"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/scenarios"
	"github.com/inferprobe/inferprobe/simulator"
)

// TestEndpointsAgainstSimulator sends every endpoint type, streamed and not
// where the API streams, to the simulator, which speaks each of them, and
// checks the outcome, the chunks and the token counts.
func TestEndpointsAgainstSimulator(t *testing.T) {
	const (
		words  = 20
		tokens = 12
	)
	sim := newSimulator(t, simulator.Config{Profile: simulator.Profile{TTFT: ms, ITL: 100 * time.Microsecond}})
	root := strings.TrimSuffix(sim, "/v1")
	completionsTemplate := &scenarios.Template{
		Path: "/completions",
		Body: map[string]any{
			"model": "{{model}}", "prompt": "{{prompt}}", "max_tokens": "{{max_tokens}}",
			"stream": "{{stream}}", "stream_options": map[string]any{"include_usage": true},
		},
		TextPath: "choices.0.text", OutputTokensPath: "usage.completion_tokens", InputTokensPath: "usage.prompt_tokens",
	}
	for _, tc := range []struct {
		endpoint string
		url      string
		template *scenarios.Template
		// in is the input length expected: the simulator's count of the
		// prompt's words where the API reports usage, else the prompt's
		// own (0 here).
		in        int
		generates bool
	}{
		{endpoint: prober.EndpointChat, in: words, generates: true},
		{endpoint: prober.EndpointCompletions, in: words, generates: true},
		{endpoint: prober.EndpointResponses, in: words, generates: true},
		{endpoint: prober.EndpointMessages, in: words, generates: true},
		{endpoint: prober.EndpointTGI, url: root, in: 0, generates: true},
		{endpoint: prober.EndpointTemplate, template: completionsTemplate, in: words, generates: true},
		{endpoint: prober.EndpointEmbeddings, in: words},
		{endpoint: prober.EndpointNIMRanking, in: words},
		{endpoint: prober.EndpointCohereRerank, url: root + "/v2", in: words},
		{endpoint: prober.EndpointTEIRerank, url: root, in: 0},
	} {
		for _, stream := range []bool{true, false} {
			ep, _ := scenarios.LookupEndpoint(tc.endpoint)
			if stream && !ep.Streams {
				continue
			}
			name := tc.endpoint
			if stream {
				name += " stream"
			}
			t.Run(name, func(t *testing.T) {
				url := sim
				if tc.url != "" {
					url = tc.url
				}
				tg := newTarget(t, url, func(st *scenarios.Target) {
					st.Endpoint, st.Stream, st.Template = tc.endpoint, &stream, tc.template
				})
				req, err := prober.NewRequest(tg, prompt(words, tokens), map[string]any{"ignore_eos": true})
				if err != nil {
					t.Fatal(err)
				}
				rec := prober.NewClient().Do(context.Background(), tg, req)
				if rec.Outcome != record.OutcomeOK {
					t.Fatalf("outcome %v %q: %s", rec.Outcome, rec.Reason, rec.Err)
				}
				wantOut, wantChunks := 0, 0
				if tc.generates {
					wantOut = tokens
				}
				if stream {
					wantChunks = tokens
				}
				if rec.OutputTokens != wantOut || rec.InputTokens != tc.in || len(rec.Chunks) != wantChunks {
					t.Errorf("output %d input %d chunks %d, want %d %d %d", rec.OutputTokens, rec.InputTokens, len(rec.Chunks), wantOut, tc.in, wantChunks)
				}
				if tc.generates && (rec.TokenSource != record.TokensFromUsage || rec.PinnedOutputTokens != tokens) {
					t.Errorf("token source %v, pinned %d; want usage, %d", rec.TokenSource, rec.PinnedOutputTokens, tokens)
				}
				if _, ok := rec.TTFT(); ok != stream {
					t.Errorf("TTFT present: %v, want %v", ok, stream)
				}
			})
		}
	}
}

// gpt2Tokenizer finds the shared GPT-2 tokenizer.json, or skips.
func gpt2Tokenizer(t *testing.T) string {
	t.Helper()
	const rel = "shared/data/tokenizers/gpt2/tokenizer.json"
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if p := filepath.Join(dir, rel); fileExists(p) {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skipf("%s not found above the package directory", rel)
		}
		dir = parent
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestTokenCountingWithoutUsage: a server that sends no usage and four
// tokens per chunk. With a tokenizer the counts are exact and ITL is per
// token; without one the chunks are counted, and the record says so.
func TestTokenCountingWithoutUsage(t *testing.T) {
	const (
		itl      = 2 * ms
		tokens   = 32
		perChunk = 4
		words    = 24
	)
	url := newSimulator(t, simulator.Config{
		Profile:   simulator.Profile{TTFT: 5 * ms, ITL: itl},
		OmitUsage: true, TokensPerChunk: perChunk,
	})
	tokenizerPath := gpt2Tokenizer(t)
	for _, tc := range []struct {
		name      string
		tokenizer string
		source    record.TokenSource
		out, in   int
		first     int
	}{
		// The simulator's words are single GPT-2 tokens, as are the prompt's.
		{"tokenizer", tokenizerPath, record.TokensFromTokenizer, tokens, words, perChunk},
		{"no tokenizer", "", record.TokensFromChunks, tokens / perChunk, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := newTarget(t, url, func(st *scenarios.Target) { st.Tokenizer = tc.tokenizer })
			req, err := prober.NewRequest(tg, prompt(words, tokens), map[string]any{"ignore_eos": true})
			if err != nil {
				t.Fatal(err)
			}
			rec := prober.NewClient().Do(context.Background(), tg, req)
			if rec.Outcome != record.OutcomeOK {
				t.Fatalf("outcome %v %q: %s", rec.Outcome, rec.Reason, rec.Err)
			}
			if rec.TokenSource != tc.source || rec.OutputTokens != tc.out || rec.InputTokens != tc.in || rec.FirstChunkTokens != tc.first {
				t.Fatalf("source %v output %d input %d first chunk %d, want %v %d %d %d",
					rec.TokenSource, rec.OutputTokens, rec.InputTokens, rec.FirstChunkTokens, tc.source, tc.out, tc.in, tc.first)
			}
			if tc.tokenizer == "" {
				return
			}
			// 7 chunks after the first, 4 tokens each, one ITL apart: a span of
			// 28 ITL over 28 tokens. Per chunk it would read 4×.
			if d, ok := rec.ITL(); !ok || !within(d, itl, 0.25, 0) {
				t.Errorf("ITL %v, want %v per token", d, itl)
			}
		})
	}
}

// TestClientOutputCount: with a tokenizer, an output whose length came from
// usage is counted by the tokenizer too, the client's count AIPerf compares
// usage with; without one it is not.
func TestClientOutputCount(t *testing.T) {
	const tokens, words = 16, 8
	url := newSimulator(t, simulator.Config{Profile: simulator.Profile{TTFT: 5 * ms, ITL: ms}})
	for _, tc := range []struct {
		name, tokenizer string
		client          int
	}{{"tokenizer", gpt2Tokenizer(t), tokens}, {"no tokenizer", "", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			tg := newTarget(t, url, func(st *scenarios.Target) { st.Tokenizer = tc.tokenizer })
			req, err := prober.NewRequest(tg, prompt(words, tokens), map[string]any{"ignore_eos": true})
			if err != nil {
				t.Fatal(err)
			}
			rec := prober.NewClient().Do(context.Background(), tg, req)
			if rec.Outcome != record.OutcomeOK || rec.TokenSource != record.TokensFromUsage || rec.UsagePromptTokens == 0 {
				t.Fatalf("outcome %v %s, source %v, usage prompt %d: want a success counted by usage", rec.Outcome, rec.Err, rec.TokenSource, rec.UsagePromptTokens)
			}
			// The simulator's words are single GPT-2 tokens.
			if rec.OutputTokens != tokens || rec.ClientOutputTokens != tc.client {
				t.Errorf("output %d, client's count %d; want %d and %d", rec.OutputTokens, rec.ClientOutputTokens, tokens, tc.client)
			}
		})
	}
}

// TestMismatchCounter: a server that ignores min_tokens (and ignore_eos)
// returns shorter outputs than the probe pinned, and the mismatch counter
// says so; an honest one leaves it at zero.
func TestMismatchCounter(t *testing.T) {
	const tokens = 32
	for _, tc := range []struct {
		name           string
		ignore         bool
		wantMismatches bool
	}{
		{"honest server", false, false},
		{"server ignores min_tokens", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := newSimulator(t, simulator.Config{
				Profile:       simulator.Profile{TTFT: ms, ITL: 100 * time.Microsecond},
				NaturalTokens: 4, IgnoreMinTokens: tc.ignore, Seed: 3,
			})
			tg := newTarget(t, url, nil)
			reg := prometheus.NewRegistry()
			series := collector.NewRequests(reg).Series(collector.Labels{Target: "sim", Model: "m", Scenario: "p", Phase: "probe"}, report.SLO{})
			client := prober.NewClient()
			for range 5 {
				req, err := prober.NewRequest(tg, prompt(8, tokens), map[string]any{"min_tokens": tokens})
				if err != nil {
					t.Fatal(err)
				}
				if req.PinnedOutputTokens != tokens {
					t.Fatalf("min_tokens = max_tokens pinned %d, want %d", req.PinnedOutputTokens, tokens)
				}
				rec := client.Do(context.Background(), tg, req)
				if rec.Outcome != record.OutcomeOK {
					t.Fatalf("outcome %v %q: %s", rec.Outcome, rec.Reason, rec.Err)
				}
				series.Observe(rec)
			}
			mismatches := counterValue(t, reg, "inferprobe_output_length_mismatches_total")
			if (mismatches > 0) != tc.wantMismatches {
				t.Errorf("output_length_mismatches_total = %v after 5 requests; want mismatches: %v", mismatches, tc.wantMismatches)
			}
		})
	}
}

func counterValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// TestReasoningAgainstSimulator: a reasoning model's replies, chat and
// completions alike, streamed and not. Reasoning chunks count for TTFT and
// ITL and not for the first output token; a tokenizer counts their text.
func TestReasoningAgainstSimulator(t *testing.T) {
	const (
		itl       = 10 * ms
		reasoning = 5
		tokens    = 8
	)
	for _, omitUsage := range []bool{false, true} {
		url := newSimulator(t, simulator.Config{
			Profile:         simulator.Profile{TTFT: 5 * ms, ITL: itl},
			ReasoningTokens: reasoning, OmitUsage: omitUsage,
		})
		tokenizer, source, wantReasoning := "", record.TokensFromUsage, reasoning
		if omitUsage {
			// Only usage says which tokens were reasoning.
			tokenizer, source, wantReasoning = gpt2Tokenizer(t), record.TokensFromTokenizer, 0
		}
		for _, endpoint := range []string{prober.EndpointChat, prober.EndpointCompletions} {
			for _, stream := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s stream=%v usage=%v", endpoint, stream, !omitUsage), func(t *testing.T) {
					tg := newTarget(t, url, func(st *scenarios.Target) {
						st.Endpoint, st.Stream, st.Tokenizer = endpoint, &stream, tokenizer
					})
					req, err := prober.NewRequest(tg, prompt(4, tokens), map[string]any{"ignore_eos": true})
					if err != nil {
						t.Fatal(err)
					}
					rec := prober.NewClient().Do(context.Background(), tg, req)
					if rec.Outcome != record.OutcomeOK {
						t.Fatalf("outcome %v %q: %s", rec.Outcome, rec.Reason, rec.Err)
					}
					if rec.OutputTokens != tokens || rec.ReasoningTokens != wantReasoning || rec.TokenSource != source {
						t.Errorf("output %d tokens, %d reasoning, from %v; want %d, %d, from %v",
							rec.OutputTokens, rec.ReasoningTokens, rec.TokenSource, tokens, wantReasoning, source)
					}
					if !stream {
						return
					}
					if len(rec.Chunks) != tokens || rec.FirstOutput != reasoning {
						t.Fatalf("%d chunks, first output at %d; want %d chunks, the first output after %d of reasoning", len(rec.Chunks), rec.FirstOutput, tokens, reasoning)
					}
					ttft, _ := rec.TTFT()
					ttfot, _ := rec.TTFOT()
					// The simulator sends on absolute due times: the first
					// output token is not due before TTFT and nearly five ITL,
					// however late the reasoning tokens came on a busy machine.
					if ttft >= ttfot || ttfot < 5*ms+(reasoning-1)*itl {
						t.Errorf("TTFT %v, time to first output token %v: want the first output token after the first reasoning one, not before %v",
							ttft, ttfot, 5*ms+(reasoning-1)*itl)
					}
					if d, ok := rec.ITL(); !ok || !within(d, itl, 0.3, 2*ms) {
						t.Errorf("ITL %v, want %v", d, itl)
					}
				})
			}
		}
	}
}
