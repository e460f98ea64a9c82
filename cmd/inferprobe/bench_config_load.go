package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/scenarios"
)

func (f *benchFlags) arrival(b *benchScenario, a *scenarios.Arrival) error {
	const path = benchProbe + ".arrival"
	if f.arrivalPattern == "concurrency-burst" && (*f.set["request-rate"] || *f.set["request-rate-series"]) {
		return errors.New("--arrival-pattern concurrency-burst sends at --concurrency without a rate; drop --request-rate, or choose poisson, constant or gamma")
	}
	if *f.set["user-centric-rate"] || *f.set["num-users"] {
		return f.users.arrival(f, b, a)
	}
	switch {
	case *f.set["request-rate"] || *f.set["request-rate-series"]:
		if *f.set["request-rate-series"] {
			if err := f.rateSeries(b, a); err != nil {
				return err
			}
		} else {
			a.Rate = f.requestRate
			b.set(path+".rate", "--request-rate")
		}
		a.Pattern = f.arrivalPattern
		b.set(path+".pattern", "--arrival-pattern")
		if f.arrivalPattern == scenarios.ArrivalGamma {
			a.Smoothness = f.smoothness
			b.set(path+".smoothness", "--arrival-smoothness")
		}
		if *f.set["concurrency"] {
			a.MaxConcurrency = f.concurrency
			b.set(path+".max_concurrency", "--concurrency")
		}
	case f.replays():
		// A replayed trace sends at its own times; only a cap applies.
		if *f.set["concurrency"] {
			a.MaxConcurrency = f.concurrency
			b.set(path+".max_concurrency", "--concurrency")
		}
	default:
		a.Pattern, a.Concurrency = scenarios.ArrivalConcurrency, max(f.concurrency, 1)
		if *f.set["concurrency"] {
			a.Concurrency = f.concurrency
		}
		b.set(path+".pattern", "--concurrency")
		b.set(path+".concurrency", "--concurrency")
	}
	return nil
}

// rateSeries sets a's rate series from --request-rate-series.
func (f *benchFlags) rateSeries(b *benchScenario, a *scenarios.Arrival) error {
	switch {
	case *f.set["request-rate"]:
		return errors.New("--request-rate and --request-rate-series are mutually exclusive, as in AIPerf: keep one")
	case *f.set["request-rate-ramp-duration"]:
		return errors.New("--request-rate-ramp-duration cannot be used with --request-rate-series here; start the series with the ramp's points instead (e.g. {\"time_s\": 0, \"qps\": 0.1}, {\"time_s\": 30, \"qps\": 10})")
	}
	points, err := readRateSeries(f.load.rateSeries)
	if err != nil {
		return err
	}
	a.Series = rateSteps(points)
	// The list's path is for --save-scenario, which writes it whole; its
	// steps' fields are for the check, which looks at each.
	const path = benchProbe + ".arrival.series"
	b.set(path, "--request-rate-series")
	for i, s := range a.Series {
		b.set(fmt.Sprintf("%s[%d].rate", path, i), "--request-rate-series")
		if s.Duration > 0 {
			b.set(fmt.Sprintf("%s[%d].duration", path, i), "--request-rate-series")
		}
	}
	return nil
}

func (f *benchFlags) dataset(b *benchScenario, d *scenarios.Dataset) error {
	const path = benchProbe + ".dataset"
	if f.inputFile == "" {
		if f.fixedSchedule {
			return errors.New("--fixed-schedule replays the timestamps of an --input-file; give one, or drop --fixed-schedule")
		}
		d.Synthetic = &scenarios.Synthetic{
			InputTokens:  scenarios.Lengths{Mean: f.islMean, Stddev: f.islStddev},
			OutputTokens: scenarios.Lengths{Mean: f.oslMean, Stddev: f.oslStddev},
		}
		b.set(path+".synthetic.input_tokens.mean", "--synthetic-input-tokens-mean")
		b.set(path+".synthetic.input_tokens.stddev", "--synthetic-input-tokens-stddev")
		b.set(path+".synthetic.output_tokens.mean", "--output-tokens-mean")
		b.set(path+".synthetic.output_tokens.stddev", "--output-tokens-stddev")
		if err := f.shapes(b, d.Synthetic, path); err != nil {
			return err
		}
		var requests int
		if *f.set["request-count"] {
			requests = f.requestCount
		}
		if err := f.workload.apply(b, d, path, requests); err != nil {
			return err
		}
		if err := f.media.apply(b, d.Synthetic, path+".synthetic", f.endpointType); err != nil {
			return err
		}
		return f.rankings.apply(b, d.Synthetic, path+".synthetic", f.endpointType)
	}
	if err := f.rankings.refuseForFile(); err != nil {
		return err
	}
	if images, audio := f.media.on(); images || audio {
		return errors.New("--image-* and --audio-* add synthetic images and audio, and an --input-file's entries are sent as written; drop them, or drop --input-file")
	}
	for flag, v := range map[string]string{"--seq-dist": f.seqDist, "--random-range-ratio": f.rangeRatio} {
		if v != "" {
			return fmt.Errorf("%s shapes synthetic prompts, and an --input-file's entries are sent as written; drop %s, or write the lengths into the file", flag, flag)
		}
	}
	if f.fixedSchedule && f.datasetFormat == dataset.FormatRandomPool {
		return errors.New("--fixed-schedule replays timestamps, which a random_pool does not keep: its entries are drawn at random; drop --fixed-schedule, or use --custom-dataset-type single_turn")
	}
	// Entries that give no output length get --osl, else no limit, as AIPerf.
	d.File = &scenarios.File{Path: f.inputFile, Format: f.datasetFormat, Timing: scenarios.TimingArrival,
		OutputTokens: scenarios.Lengths{Mean: f.oslMean, Stddev: f.oslStddev}}
	if f.replays() {
		d.File.Timing = scenarios.TimingReplay
	}
	b.set(path+".file.path", "--input-file")
	b.set(path+".file.output_tokens.mean", "--output-tokens-mean")
	b.set(path+".file.output_tokens.stddev", "--output-tokens-stddev")
	b.set(path+".file.format", "--custom-dataset-type")
	b.set(path+".file.timing", "--fixed-schedule")
	return f.workload.applyToFile(b, d, path)
}

// shapes applies --seq-dist and --random-range-ratio to s, the synthetic
// dataset at path.
func (f *benchFlags) shapes(b *benchScenario, s *scenarios.Synthetic, path string) error {
	if f.seqDist != "" {
		if f.rangeRatio != "" {
			return errors.New("--random-range-ratio cannot be used with --seq-dist, as in AIPerf: keep one of them")
		}
		pairs, err := parseSequenceDistribution(f.seqDist)
		if err != nil {
			return err
		}
		s.SequenceDistribution = pairs
		b.set(path+".synthetic.sequence_distribution", "--seq-dist")
	}
	if f.rangeRatio != "" {
		if !(*f.set["synthetic-input-tokens-mean"] || *f.set["isl"]) || !(*f.set["output-tokens-mean"] || *f.set["osl"]) {
			return errors.New("--random-range-ratio draws around --isl and --osl: give both, as AIPerf requires")
		}
		r, err := parseRangeRatio(f.rangeRatio)
		if err != nil {
			return err
		}
		s.RangeRatio = &r
		b.set(path+".synthetic.range_ratio", "--random-range-ratio")
	}
	return nil
}

// replays reports whether the run sends at the input file's timestamps:
// with --fixed-schedule, and, as AIPerf does, for a trace whose type
// --custom-dataset-type names, given without a rate, a concurrency or
// --no-fixed-schedule. A trace's type detected from the file is not
// replayed: AIPerf decides on replay before it reads the file.
func (f *benchFlags) replays() bool {
	return f.inputFile != "" && (f.fixedSchedule ||
		*f.set["custom-dataset-type"] && isTrace(f.datasetFormat) &&
			!*f.set["fixed-schedule"] && !*f.set["request-rate"] && !*f.set["request-rate-series"] && !*f.set["concurrency"])
}

// limit is the length the flags give the run (--conversation-num: each
// conversation once); zero leaves it to the engine
// (one pass over a replayed --input-file, else 10 requests, as AIPerf).
func (f *benchFlags) limit() prober.Limit {
	var l prober.Limit // both: whichever ends first, as AIPerf
	if *f.set["benchmark-duration"] {
		l.Duration = time.Duration(f.duration * float64(time.Second))
	}
	if *f.set["request-count"] {
		l.Requests = uint64(f.requestCount)
	}
	if l == (prober.Limit{}) && f.workload.given(conversationFlags...) {
		return f.workload.limit(f.seed)
	}
	return l
}
