package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/promslog"

	"github.com/inferprobe/inferprobe/servermetrics"
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
	gpuURLs        []string          // the DCGM exporter endpoints of --gpu-telemetry URL…
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
		"model": func(v string) error { return severalModels(f.model, v) },
		"url":   f.urls.Set,
	}
	cmd.Arg("values", "").Hidden().Strings()
	cmd.Action(f.applyAIPerf)
}

// oneValue is a flag of one value that AIPerf takes several of, after one
// flag name (--model A B) or with the flag repeated (--model A --model B): a
// second value is refused by several, in either form, rather than with
// kingpin's "cannot be repeated".
type oneValue struct {
	target  *string
	given   bool
	several func(first, next string) error
}

func (v *oneValue) Set(s string) error {
	if v.given {
		return v.several(*v.target, s)
	}
	v.given, *v.target = true, s
	return nil
}

func (v *oneValue) String() string { return *v.target }

// IsCumulative lets kingpin pass a repeated flag to Set, which refuses it.
func (v *oneValue) IsCumulative() bool { return true }

func severalModels(first, next string) error {
	return fmt.Errorf("--model %s %s: %s", first, next, whyOneModel)
}

// urlList is --url, which AIPerf takes several of, after one flag name
// (--url A B: the values after the first come through more) or with the
// flag repeated (--url A --url B).
type urlList []string

func (l *urlList) Set(s string) error { *l = append(*l, s); return nil }

func (l *urlList) String() string { return strings.Join(*l, " ") }

// IsCumulative lets kingpin pass a repeated flag to Set.
func (l *urlList) IsCumulative() bool { return true }

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
// onto --collector.gpu and --collector.gpu.fields-file, and takes its URLs
// (a value that starts with http or has a colon, as AIPerf tells them) as
// DCGM exporter endpoints to scrape. With URLs alone the local collector is
// not asked for: as in AIPerf, the URLs are where the GPUs are read.
func (f *benchFlags) applyGPUTelemetry() error {
	if !*f.set["gpu-telemetry"] {
		return nil
	}
	local := false
	for _, v := range f.gpuValues {
		switch lv := strings.ToLower(v); {
		case lv == "amdsmi":
			return fmt.Errorf("--gpu-telemetry amdsmi: inferprobe reads NVIDIA GPUs only (DCGM, else NVML); drop it, or use --no-gpu-telemetry")
		case lv == "pynvml":
			local = true
			f.notes = append(f.notes, "--gpu-telemetry pynvml: inferprobe reads this host's GPUs through DCGM, else NVML")
		case strings.HasSuffix(lv, ".csv"):
			local = true
			if err := f.lazyFlag("collector.gpu.fields-file").Model().Value.Set(v); err != nil {
				return err
			}
		case strings.HasPrefix(lv, "http") || strings.Contains(lv, ":"):
			f.gpuURLs = append(f.gpuURLs, servermetrics.MetricsURL(v))
		default:
			local = true
			f.notes = append(f.notes, fmt.Sprintf("--gpu-telemetry %s is ignored: inferprobe has no live dashboard; it reads this host's GPUs through DCGM, else NVML, and DCGM exporter endpoints given as URLs", v))
		}
	}
	if len(f.gpuURLs) > 0 && !f.gpuTelemetry {
		return fmt.Errorf("--no-gpu-telemetry with --gpu-telemetry URLs: use one or the other")
	}
	if len(f.gpuURLs) > 0 && !local {
		return nil
	}
	collector := f.cmd.GetFlag("collector.gpu")
	if collector == nil {
		return nil // a test's command without GPU flags
	}
	return collector.Model().Value.Set(fmt.Sprint(f.gpuTelemetry))
}

// asksLocalGPUs says the command asked for this host's GPUs through
// --gpu-telemetry (not only for DCGM exporter URLs): their absence is then
// warned about.
func (f *benchFlags) asksLocalGPUs() bool {
	return *f.set["gpu-telemetry"] && f.gpuTelemetry && (len(f.gpuURLs) == 0 || len(f.gpuValues) > len(f.gpuURLs))
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
