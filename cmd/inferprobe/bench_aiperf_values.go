package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/inferprobe/inferprobe/scenarios"
)

// aiperfChoice is a flag whose value is one of a set of spellings, AIPerf's
// (any case, - or _) and inferprobe's, each meaning a value of inferprobe's
// or an AIPerf value inferprobe does not support.
type aiperfChoice struct {
	what, flag string
	choices    map[string]choice // by normalized spelling
	target     *string
}

type choice struct {
	value string // what it sets
	why   string // when not supported: why, and what to use instead
}

func normalizeChoice(s string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "-") }

func (c *aiperfChoice) Set(s string) error {
	ch, ok := c.choices[normalizeChoice(s)]
	switch {
	case !ok:
		return fmt.Errorf("%s %q: want one of %s", c.flag, s, strings.Join(supportedChoices(c.choices), ", "))
	case ch.why != "":
		return fmt.Errorf("%s %s is an AIPerf %s that inferprobe does not support: %s", c.flag, s, c.what, ch.why)
	}
	*c.target = ch.value
	return nil
}

func (c *aiperfChoice) String() string { return *c.target }

func supportedChoices(m map[string]choice) []string {
	var names []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k].why == "" {
			names = append(names, k)
		}
	}
	return names
}

// aiperfEndpoints are the endpoint types by inferprobe's names and AIPerf's.
var aiperfEndpoints = endpointChoices()

func endpointChoices() map[string]choice {
	m := map[string]choice{
		"huggingface-generate": {value: "tgi"},
		"nim-rankings":         {value: "nim_ranking"},
		"cohere-rankings":      {value: "cohere_rerank"},
		"hf-tei-rankings":      {value: "tei_rerank"},
		"nim-embeddings":       {value: "embeddings"},
		"chat-embeddings":      {why: "bench sends embeddings as OpenAI's input strings; use --endpoint-type embeddings"},
		"audio-transcription":  {why: whyModality},
		"image-generation":     {why: whyModality},
		"image-edit":           {why: whyModality},
		"video-generation":     {why: whyModality},
		"image-retrieval":      {why: whyModality},
		"solido-rag":           {why: "bench has no Solido RAG client; describe the API with a template endpoint in a scenario file (inferprobe serve)"},
		"raw":                  {why: "bench builds each request's body; a template endpoint in a scenario file sends any JSON body (inferprobe serve)"},
	}
	for _, name := range scenarios.EndpointNames() {
		m[normalizeChoice(name)] = choice{value: name}
	}
	return m
}

// aiperfEndpointHelp lists AIPerf's endpoint names that are not inferprobe's.
func aiperfEndpointHelp() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(aiperfEndpoints)) {
		if c := aiperfEndpoints[k]; c.why == "" && normalizeChoice(c.value) != k {
			parts = append(parts, k+" ("+c.value+")")
		}
	}
	return strings.Join(parts, ", ")
}

// aiperfDatasets are the --custom-dataset-type spellings, AIPerf's and
// inferprobe's, and the scenario file format each reads.
var aiperfDatasets = datasetChoices()

func datasetChoices() map[string]choice {
	m := map[string]choice{
		"bailian-trace":          {why: "convert it to mooncake_trace JSONL ({\"timestamp\" in ms, \"input_length\", \"output_length\", \"hash_ids\"})"},
		"raw-payload":            {why: "bench builds each request's body; a template endpoint in a scenario file sends any JSON body (inferprobe serve)"},
		"inputs-json":            {why: "give the prompts as single_turn JSONL ({\"text\": …} a line)"},
		"dag-jsonl":              {why: whyAgentic},
		"tracelab":               {why: whyAgentic},
		"sagemaker-data-capture": {why: "extract the prompts as single_turn JSONL ({\"text\": …} a line)"},
	}
	for _, format := range scenarios.FormatNames() {
		m[normalizeChoice(format)] = choice{value: format}
		if f, _ := scenarios.LookupFormat(format); f.AIPerfName != "" {
			m[normalizeChoice(f.AIPerfName)] = choice{value: format}
		}
	}
	for _, suite := range []string{"qualitative", "coding", "humanities", "math", "multilingual", "qa", "rag", "reasoning", "roleplay", "stem", "summarization", "writing"} {
		m["speed-bench-"+suite] = choice{why: whySpeedBench}
	}
	for _, k := range []string{"1-k", "2-k", "8-k", "16-k", "32-k"} {
		for _, entropy := range []string{"", "-low-entropy", "-mixed", "-high-entropy"} {
			m["speed-bench-throughput-"+k+entropy] = choice{why: whySpeedBench}
		}
	}
	return m
}

const whySpeedBench = "SPEED-Bench is a downloaded dataset and inferprobe downloads no datasets; save its prompts as single_turn JSONL"

func aiperfDatasetHelp() string {
	return "single-turn, multi-turn, random-pool, mooncake-trace, baseten-trace, burst-gpt-trace, weka-trace (AIPerf's names; _ works for -), or inferprobe's " +
		strings.Join(scenarios.FormatNames(), ", ")
}

// isTrace reports whether a dataset format's entries always carry
// timestamps, which bench replays unless given a load, as AIPerf does.
func isTrace(format string) bool {
	f, _ := scenarios.LookupFormat(format)
	return f.Timestamps == scenarios.TimestampsAlways
}

var aiperfArrivals = map[string]choice{
	"poisson":  {value: scenarios.ArrivalPoisson},
	"constant": {value: scenarios.ArrivalConstant},
	"gamma":    {value: scenarios.ArrivalGamma},
	// AIPerf's name for what bench does without --request-rate.
	"concurrency-burst": {value: "concurrency-burst"},
}

var aiperfConnReuse = map[string]choice{
	"pooled":               {value: "true"},
	"never":                {value: "false"},
	"sticky-user-sessions": {why: "bench does not tie connections to sessions; --keep-alive pools them, --no-keep-alive opens one per request"},
}

// aiperfLogLevels maps AIPerf's log levels onto --log.level's.
var aiperfLogLevels = map[string]choice{
	"trace": {value: "debug"}, "debug": {value: "debug"}, "info": {value: "info"}, "notice": {value: "info"},
	"success": {value: "info"}, "warning": {value: "warn"}, "error": {value: "error"}, "critical": {value: "error"},
}

var aiperfUITypes = map[string]choice{
	"dashboard": {value: "auto"}, "simple": {value: "plain"}, "none": {value: "off"},
	// bench's own --progress values.
	"auto": {value: "auto"}, "tty": {value: "tty"}, "plain": {value: "plain"}, "off": {value: "off"},
}
