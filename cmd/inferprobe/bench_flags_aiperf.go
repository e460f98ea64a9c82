package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/promslog"

	"github.com/inferprobe/inferprobe/scenarios"
)

// aiperf holds what bench's AIPerf options set beyond benchFlags' own
// fields; aiperfOptions (aiperf_options.go) says what each option does.
type aiperf struct {
	cmd            *kingpin.CmdClause
	logLevel       *promslog.Level // the process's, which --log-level and -v set
	aiperfLogLevel string
	verbose        counter
	extraVerbose   bool
	customEndpoint string
	connReuse      string
	gpuTelemetry   bool
	gpuValues      []string
	aliasOf        map[string]string // hidden alias → the bench flag it sets
	used           []usedOption      // the unsupported and ignored options given, in order
	notes          []string          // said once before the run
	// more takes the values that follow a flag's first, for the flags that
	// take several after one flag name, as AIPerf's list options do
	// (--extra-inputs temperature:0.7 top_p:0.9).
	more map[string]func(string) error
}

type usedOption struct {
	opt  *aiperfOption
	name string // as the user typed it
}

// addAIPerfFlags registers AIPerf's options beyond bench's visible flags:
// the hidden flags some supported options need, every other AIPerf name
// of a supported option as a hidden alias, and every unsupported or
// ignored option as a hidden flag that is refused or noted when given.
func (f *benchFlags) addAIPerfFlags(cmd *kingpin.CmdClause, flag func(name, help string) *kingpin.FlagClause) {
	f.cmd = cmd
	flag("endpoint", "AIPerf's --custom-endpoint: the request path; its end must be --endpoint-type's path, and what comes before it replaces --url's path.").Hidden().StringVar(&f.customEndpoint)
	flag("use-server-token-count", "Token counts come from the server's usage (what bench always does, asking for usage when streaming).").Hidden().Bool()
	flag("connection-reuse-strategy", "pooled or never: --keep-alive or --no-keep-alive.").Hidden().SetValue(&aiperfChoice{what: "connection reuse strategy", flag: "--connection-reuse-strategy", choices: aiperfConnReuse, target: &f.connReuse})
	flag("log-level", "AIPerf's log level, mapped to --log.level.").Hidden().SetValue(&aiperfChoice{what: "log level", flag: "--log-level", choices: aiperfLogLevels, target: &f.aiperfLogLevel})
	flag("verbose", "--log.level=debug.").Short('v').Hidden().SetValue(&f.verbose)
	flag("extra-verbose", "--log.level=debug.").Hidden().BoolVar(&f.extraVerbose)
	flag("gpu-telemetry", "--collector.gpu; --no-gpu-telemetry turns it off.").Hidden().BoolVar(&f.gpuTelemetry)
	flag("ui-type", "--progress.").Hidden().SetValue(&aiperfChoice{what: "UI type", flag: "--ui-type", choices: aiperfUITypes, target: &f.progress})

	f.aliasOf = map[string]string{}
	for i := range aiperfOptions {
		o := &aiperfOptions[i]
		var stub *kingpin.FlagClause
		for _, name := range strings.Fields(o.names) {
			long, isLong := strings.CutPrefix(name, "--")
			switch {
			case !isLong && len(name) == 2: // -m: a short name
				if o.status == supported {
					f.lazyFlag(o.flag).Short(rune(name[1]))
				} else {
					stub.Short(rune(name[1]))
				}
			case !isLong:
				// -vv: kingpin reads it as -v -v.
			case o.status != supported:
				c := cmd.Flag(long, "").Hidden()
				c.SetValue(&optionStub{f: f, opt: o, name: name})
				if stub == nil {
					stub = c // a short name is refused as the option's first name
				}
			case long == o.flag || cmd.GetFlag(long) != nil:
			case strings.HasPrefix(long, "no-") && long[3:] == o.flag:
				// kingpin negates a bool flag: --no-fixed-schedule.
			default:
				f.aliasOf[long] = o.flag
				cmd.Flag(long, "").Hidden().SetValue(&aliasValue{f: f, flag: o.flag})
			}
		}
	}
	f.more = map[string]func(string) error{
		"extra-inputs": func(v string) error { f.extraInputs = append(f.extraInputs, v); return nil },
		"header":       func(v string) error { f.headers = append(f.headers, v); return nil },
		"goodput":      func(v string) error { f.goodput += " " + v; return nil },
		"gpu-telemetry": func(v string) error {
			f.gpuValues = append(f.gpuValues, v)
			return nil
		},
		"model": func(v string) error { return fmt.Errorf("--model %s %s: %s", f.model, v, whyOneModel) },
		"url": func(v string) error {
			return fmt.Errorf("--url %s %s: bench sends to one server; run it once per server", f.url, v)
		},
	}
	cmd.Arg("values", "").Hidden().Strings()
	cmd.Action(f.applyAIPerf)
}

// lazyFlag is the bench flag called name, which may be registered after
// bench's own flags (--workers is); it exists by the time it is parsed.
func (f *benchFlags) lazyFlag(name string) *kingpin.FlagClause {
	if c := f.cmd.GetFlag(name); c != nil {
		return c
	}
	panic("bench has no flag --" + name + ", which aiperfOptions names")
}

// applyAIPerf runs once the command line is parsed: it refuses the
// unsupported options, gives the values that follow a list option to it,
// notes the ignored options, and sets what the AIPerf options set outside
// benchFlags (the log level, GPU telemetry).
func (f *benchFlags) applyAIPerf(ctx *kingpin.ParseContext) error {
	var refused []usedOption
	noted := map[*aiperfOption]bool{}
	for _, u := range f.used {
		switch {
		case u.opt.status == unsupported:
			refused = append(refused, u)
		case !noted[u.opt]:
			noted[u.opt] = true
			f.notes = append(f.notes, fmt.Sprintf("%s is an AIPerf option that changes nothing here: %s", u.name, u.opt.why))
		}
	}
	if len(refused) > 0 {
		return unsupportedError(refused)
	}
	var last *kingpin.FlagClause
	for _, el := range ctx.Elements {
		switch c := el.Clause.(type) {
		case *kingpin.FlagClause:
			last = c
		case *kingpin.ArgClause:
			if last == nil {
				return fmt.Errorf("unexpected argument '%s'", *el.Value)
			}
			name := last.Model().Name
			if canonical, ok := f.aliasOf[name]; ok {
				name = canonical
			}
			if add, ok := f.more[name]; ok {
				if err := add(*el.Value); err != nil {
					return err
				}
			} else if _, stub := last.Model().Value.(*optionStub); !stub {
				takes := "one value"
				if b, ok := last.Model().Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
					takes = "no value"
				}
				return fmt.Errorf("unexpected argument '%s' after --%s, which takes %s", *el.Value, last.Model().Name, takes)
			}
		}
	}
	if f.model == "" {
		return fmt.Errorf("--model is required: the model name sent in every request (AIPerf's --model-names)")
	}
	if strings.Contains(f.model, ",") {
		return fmt.Errorf("--model %s names several models: %s", f.model, whyOneModel)
	}
	if *f.set["connection-reuse-strategy"] {
		f.keepAlive = f.connReuse == "true"
		*f.set["keep-alive"] = true
	}
	level := f.aiperfLogLevel
	if f.verbose > 0 || f.extraVerbose {
		level = "debug"
	}
	if level != "" && f.logLevel != nil {
		if err := f.logLevel.Set(level); err != nil {
			return err
		}
	}
	return f.applyGPUTelemetry()
}

// unsupportedError is the one line that refuses AIPerf options: the first
// with why and what to use instead, and the others named.
func unsupportedError(refused []usedOption) error {
	first := refused[0]
	var others []string
	for _, u := range refused[1:] {
		if !slices.Contains(others, u.name) && u.name != first.name {
			others = append(others, u.name)
		}
	}
	also := ""
	if len(others) > 0 {
		also = fmt.Sprintf(" (nor does it support %s)", strings.Join(others, ", "))
	}
	return fmt.Errorf("%s is an AIPerf option that inferprobe does not support: %s%s", first.name, first.opt.why, also)
}

// applyGPUTelemetry maps --gpu-telemetry [VALUE…] and --no-gpu-telemetry
// onto --collector.gpu and --collector.gpu.fields-file.
func (f *benchFlags) applyGPUTelemetry() error {
	if !*f.set["gpu-telemetry"] {
		return nil
	}
	collector := f.cmd.GetFlag("collector.gpu")
	if collector == nil {
		return nil // a test's command without GPU flags
	}
	if err := collector.Model().Value.Set(fmt.Sprint(f.gpuTelemetry)); err != nil {
		return err
	}
	for _, v := range f.gpuValues {
		switch lv := strings.ToLower(v); {
		case lv == "amdsmi":
			return fmt.Errorf("--gpu-telemetry amdsmi: inferprobe reads NVIDIA GPUs only (DCGM, else NVML); drop it, or use --no-gpu-telemetry")
		case lv == "pynvml":
			f.notes = append(f.notes, "--gpu-telemetry pynvml: inferprobe reads this host's GPUs through DCGM, else NVML")
		case strings.HasSuffix(lv, ".csv"):
			if err := f.lazyFlag("collector.gpu.fields-file").Model().Value.Set(v); err != nil {
				return err
			}
		default:
			f.notes = append(f.notes, fmt.Sprintf("--gpu-telemetry %s is ignored: inferprobe reads this host's GPUs through DCGM, else NVML (--collector.gpu.hostengine HOST:PORT for a remote nv-hostengine), and has no dashboard", v))
		}
	}
	return nil
}

// aliasValue is the Value of a hidden alias: it sets the bench flag's.
type aliasValue struct {
	f    *benchFlags
	flag string
}

func (a *aliasValue) target() kingpin.Value { return a.f.lazyFlag(a.flag).Model().Value }

func (a *aliasValue) Set(v string) error {
	if set := a.f.set[a.flag]; set != nil {
		*set = true
	}
	return a.target().Set(v)
}

func (a *aliasValue) String() string { return a.target().String() }

func (a *aliasValue) IsBoolFlag() bool {
	b, ok := a.target().(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func (a *aliasValue) IsCumulative() bool {
	c, ok := a.target().(interface{ IsCumulative() bool })
	return ok && c.IsCumulative()
}

// optionStub is the Value of an unsupported or ignored option: it records
// that the option was given. It takes no value of its own, so that both
// --public-dataset sharegpt and --reset-kv-cache parse; what follows goes
// to the hidden values argument, and is dropped with the option.
type optionStub struct {
	f    *benchFlags
	opt  *aiperfOption
	name string
}

func (s *optionStub) Set(string) error {
	s.f.used = append(s.f.used, usedOption{s.opt, s.name})
	return nil
}
func (s *optionStub) String() string     { return "" }
func (s *optionStub) IsBoolFlag() bool   { return true }
func (s *optionStub) IsCumulative() bool { return true }

// counter counts a repeatable bool flag: -v, -vv.
type counter int

func (c *counter) Set(string) error   { *c++; return nil }
func (c *counter) String() string     { return fmt.Sprint(int(*c)) }
func (c *counter) IsBoolFlag() bool   { return true }
func (c *counter) IsCumulative() bool { return true }

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
		"mooncake-trace":         {value: scenarios.FormatMooncake},
		"baseten-trace":          {value: scenarios.FormatBaseten},
		"burst-gpt-trace":        {value: scenarios.FormatBurstGPT},
		"weka-trace":             {value: scenarios.FormatWekaAgentX},
		"bailian-trace":          {why: "convert it to mooncake_trace JSONL ({\"timestamp\" in ms, \"input_length\", \"output_length\", \"hash_ids\"})"},
		"raw-payload":            {why: "bench builds each request's body; a template endpoint in a scenario file sends any JSON body (inferprobe serve)"},
		"inputs-json":            {why: "give the prompts as single_turn JSONL ({\"text\": …} a line)"},
		"dag-jsonl":              {why: whyAgentic},
		"tracelab":               {why: whyAgentic},
		"sagemaker-data-capture": {why: "extract the prompts as single_turn JSONL ({\"text\": …} a line)"},
	}
	for _, format := range scenarios.Formats {
		m[normalizeChoice(format)] = choice{value: format}
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

const whySpeedBench = "SPEED-Bench is a downloaded dataset and inferprobe downloads nothing; save its prompts as single_turn JSONL"

func aiperfDatasetHelp() string {
	return "single-turn, multi-turn, random-pool, mooncake-trace, baseten-trace, burst-gpt-trace, weka-trace (AIPerf's names; _ works for -), or inferprobe's " +
		strings.Join(scenarios.Formats, ", ")
}

// traceFormats are the dataset formats with timestamps, which bench
// replays unless given a load, as AIPerf does.
var traceFormats = []string{scenarios.FormatMooncake, scenarios.FormatBaseten, scenarios.FormatBurstGPT, scenarios.FormatAzure, scenarios.FormatWekaAgentX}

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
