package scenarios

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
)

// Prompts sends prompts from a fixed list.
type Prompts struct {
	// Texts are the prompts; each request sends one, picked at random (seeded)
	// from the list. At least one, none empty. Their length in tokens is
	// counted with the target's tokenizer when one is set, else estimated
	// as one token per word.
	Texts []string `yaml:"texts"`
	// OutputTokens is sent as max_tokens. Default mean 64, stddev 0.
	OutputTokens Lengths `yaml:"output_tokens"`
}

// Timings of a dataset file.
const (
	TimingReplay  = "replay"
	TimingArrival = "arrival"
)

// File reads requests from a dataset or trace file. The file is checked
// line by line when the probe starts (a bad line is an error naming the file,
// the line and the reason) and then read as it is sent; JSONL, CSV and
// Parquet files are streamed, never held whole, except random_pool, which
// is sampled at random.
type File struct {
	// Path is the file; a relative path is relative to the scenario file's
	// directory, and Load rewrites it to the resolved path. Required.
	Path string `yaml:"path"`
	// Format is the name of a file format: prober/dataset declares each in
	// a file of its own, and docs/configuration.md#file-formats describes
	// them. Required.
	Format string `yaml:"format"`
	// Timing is replay (send at the file's timestamps, divided by speedup, on
	// one timeline from the probe's start) or arrival (ignore them and send at
	// the probe's arrival process). A never-ending probe replays the file again
	// and again, each pass starting one mean gap after the last request of the
	// one before. Default replay for the trace formats, whose entries always
	// carry timestamps (TimestampsAlways), arrival for the others; formats
	// without timestamps are arrival only. multi_turn replays the timestamp of
	// each session's first turn. Think times (multi_turn delays) are divided
	// by speedup too.
	Timing string `yaml:"timing"`
	// Speedup divides the file's timestamps: 10 replays an hour in six
	// minutes. Replay only; > 0. Default 1.
	Speedup float64 `yaml:"speedup"`
	// BlockSize is the number of tokens each hash id stands for (mooncake,
	// baseten, weka_agentx): requests whose first k hash ids are equal get
	// identical first k blocks of tokens, so a server's prefix cache hits
	// where the trace's did. A block_size written in the file wins. >= 1;
	// default 512.
	BlockSize int `yaml:"block_size"`
	// OutputTokens is the output length of the entries that give none,
	// drawn as synthetic's; {mean: 0} sends them no limit, as AIPerf does
	// without --osl. Default {mean: 64}.
	OutputTokens Lengths `yaml:"output_tokens"`
	// StartOffset and EndOffset replay only the window of the file between
	// these timestamps (the file's own, as ms), both ends included: entries
	// before StartOffset are skipped and the replay's time 0 is
	// StartOffset, entries after EndOffset are not sent. Replay
	// only; StartOffset >= 0, EndOffset > 0 and >= StartOffset. Default
	// the whole file (EndOffset 0: to its end).
	StartOffset Duration `yaml:"start_offset"`
	EndOffset   Duration `yaml:"end_offset"`
	// AbsoluteTimestamps sends each entry its timestamp after the start, as
	// written (a trace whose first entry is at 5000 ms waits 5 s: AIPerf's
	// fixed schedule without --fixed-schedule-auto-offset); by default the
	// first timestamp replayed is time 0. Replay only; not with
	// start_offset, which sets time 0 itself, nor for baseten and azure,
	// whose timestamps are wall-clock times. Default false.
	AbsoluteTimestamps bool `yaml:"absolute_timestamps"`
}

// StartsAtFirst reports whether the replay's time 0 is the first timestamp
// replayed, rather than start_offset or the file's own 0.
func (f *File) StartsAtFirst() bool { return f.StartOffset == 0 && !f.AbsoluteTimestamps }

// Cancel cancels some requests client-side, as impatient users do (AIPerf's
// request cancellation); they are counted with outcome cancelled, not as
// errors.
type Cancel struct {
	// Rate is the fraction of requests cancelled, chosen at random (seeded);
	// 0 to 1. A trace's own cancellation flag (baseten request_canceled)
	// cancels that request regardless.
	Rate float64 `yaml:"rate"`
	// After is how long after the request was written (sent whole) it is
	// cancelled; 0 hangs up as soon as it is written. >= 0; default 0.
	After Duration `yaml:"after"`
}

// Replays reports whether the probe sends at a file's timestamps instead of
// its arrival process.
func (d *Dataset) Replays() bool { return d.File != nil && d.File.Timing == TimingReplay }

// defaultBlockSize is the tokens per hash id of the Mooncake traces.
const defaultBlockSize = 512

func (d *Dataset) setDefaults(written func(field string) bool) {
	if !written("dataset") {
		d.Synthetic = &Synthetic{}
	}
	if s := d.Synthetic; s != nil {
		if !written("dataset.synthetic.input_tokens.mean") {
			s.InputTokens.Mean = defaultInputTokens
		}
		if !written("dataset.synthetic.output_tokens.mean") {
			s.OutputTokens.Mean = defaultOutputTokens
		}
		if s.Images != nil {
			s.Images.setDefaults(written, "dataset.synthetic.images")
		}
		if s.Audio != nil {
			s.Audio.setDefaults(written, "dataset.synthetic.audio")
		}
		if s.Rankings != nil {
			s.Rankings.setDefaults(written, "dataset.synthetic.rankings")
		}
	}
	if p := d.Prompts; p != nil && !written("dataset.prompts.output_tokens.mean") {
		p.OutputTokens.Mean = defaultOutputTokens
	}
	if f := d.File; f != nil {
		if !written("dataset.file.timing") {
			f.Timing = TimingArrival
			if ff, _ := LookupFormat(f.Format); ff.Timestamps == TimestampsAlways {
				f.Timing = TimingReplay
			}
		}
		if !written("dataset.file.speedup") {
			f.Speedup = 1
		}
		if !written("dataset.file.block_size") {
			f.BlockSize = defaultBlockSize
		}
		if !written("dataset.file.output_tokens.mean") {
			f.OutputTokens.Mean = defaultOutputTokens
		}
	}
}

// sources lists the dataset sources that are set; a new source kind adds its line.
func (d *Dataset) sources() []string {
	var set []string
	if d.Synthetic != nil {
		set = append(set, "synthetic")
	}
	if d.Prompts != nil {
		set = append(set, "prompts")
	}
	if d.File != nil {
		set = append(set, "file")
	}
	return set
}

func (d *Dataset) validate(l *loader, path string) {
	switch set := d.sources(); len(set) {
	case 0:
		l.errorf(path, "must set exactly one source (synthetic, prompts or file), e.g. synthetic: {input_tokens: {mean: %d}, output_tokens: {mean: %d}}",
			defaultInputTokens, defaultOutputTokens)
	case 1:
	default:
		l.errorf(path, "sets %s; keep exactly one source", strings.Join(set, " and "))
	}
	if s := d.Synthetic; s != nil {
		s.InputTokens.validate(l, join(path, "synthetic.input_tokens"), defaultInputTokens, &TokenBound)
		s.OutputTokens.validateOutput(l, join(path, "synthetic.output_tokens"))
		s.validateWorkload(l, join(path, "synthetic"), l.written(join(path, "system_prompt")))
		s.validateMedia(l, join(path, "synthetic"))
		s.validateRankings(l, join(path, "synthetic"), l.written(join(path, "system_prompt")))
	}
	if p := d.Prompts; p != nil {
		p.validate(l, join(path, "prompts"))
	}
	if f := d.File; f != nil {
		f.validate(l, join(path, "file"))
	}
	if c := d.Cancel; c != nil {
		c.validate(l, join(path, "cancel"))
	}
	d.validateSystemPrompt(l, path)
}

func (p *Prompts) validate(l *loader, path string) {
	if len(p.Texts) == 0 {
		l.errorf(join(path, "texts"), `must list at least one prompt, e.g. texts: ["What is the capital of France?"]`)
	}
	for i, t := range p.Texts {
		if strings.TrimSpace(t) == "" {
			l.errorf(fmt.Sprintf("%s[%d]", join(path, "texts"), i), "is empty; remove it or write the prompt")
		}
	}
	p.OutputTokens.validateOutput(l, join(path, "output_tokens"))
}

func (f *File) validate(l *loader, path string) {
	f.OutputTokens.validateOutput(l, join(path, "output_tokens"))
	format, known := LookupFormat(f.Format)
	if !known {
		l.errorf(join(path, "format"), "must be one of %s, not %q", strings.Join(FormatNames(), ", "), f.Format)
	}
	switch f.Timing {
	case TimingArrival:
		for _, field := range []string{"speedup", "start_offset", "end_offset", "absolute_timestamps"} {
			if l.written(join(path, field)) {
				l.errorf(join(path, field), "applies only to timing: %s; remove it", TimingReplay)
			}
		}
	case TimingReplay:
		if format.Timestamps == TimestampsNever {
			l.errorf(join(path, "timing"), "%s files have no timestamps to replay; write timing: %s", f.Format, TimingArrival)
		}
		if !(f.Speedup > 0) || math.IsInf(f.Speedup, 1) {
			l.errorf(join(path, "speedup"), "must be > 0 (10 replays the file ten times faster), not %v", f.Speedup)
		}
		f.validateWindow(l, path, format)
	default:
		l.errorf(join(path, "timing"), "must be %s (the file's timestamps) or %s (the probe's arrival process), not %q",
			TimingReplay, TimingArrival, f.Timing)
	}
	if f.BlockSize < 1 {
		l.errorf(join(path, "block_size"), "must be >= 1 (tokens per hash id), e.g. block_size: %d", defaultBlockSize)
	}
	TokenBound.checkMax(l, join(path, "block_size"), float64(f.BlockSize))
	fp := join(path, "path")
	if f.Path == "" {
		l.errorf(fp, "is required: the dataset file, e.g. path: ./conversations.jsonl")
		return
	}
	if !filepath.IsAbs(f.Path) {
		f.Path = filepath.Join(filepath.Dir(l.file), f.Path)
	}
	l.checkFile(fp, f.Path, "")
}

// validateReplay checks the arrival of a probe that replays a file: the
// file's timestamps say when to send, so only the cap on requests in flight
// (and its ramp) applies.
func (a *Arrival) validateReplay(l *loader, path string) {
	written := l.under(path)
	for _, f := range []string{"pattern", "rate", "smoothness", "concurrency", "ramp_to", "ramp_over", "series"} {
		if written(f) {
			l.errorf(join(path, f), "does not apply when dataset.file.timing is %s, which sends at the file's timestamps; remove it, or write timing: %s",
				TimingReplay, TimingArrival)
		}
	}
	if written("max_concurrency") && a.MaxConcurrency < 1 {
		l.errorf(join(path, "max_concurrency"), "must be >= 1; leave it out for no cap")
	}
	a.validateCapRamp(l, path, written)
}

func (c *Cancel) validate(l *loader, path string) {
	if !(c.Rate >= 0 && c.Rate <= 1) {
		l.errorf(join(path, "rate"), "must be between 0 and 1 (the fraction of requests cancelled), not %v", c.Rate)
	}
	if c.After < 0 {
		l.errorf(join(path, "after"), "must be >= 0 (how long after it was sent a request is cancelled; 0 right away), e.g. after: 2s")
	}
}

// validateWindow checks the replayed window and its time 0.
func (f *File) validateWindow(l *loader, path string, format FileFormat) {
	written := l.under(path)
	if f.StartOffset < 0 {
		l.errorf(join(path, "start_offset"), "must be >= 0 (the file's timestamp the replay starts at), not %s", f.StartOffset)
	}
	switch {
	case !written("end_offset"):
	case f.EndOffset <= 0:
		l.errorf(join(path, "end_offset"), "must be > 0 (the file's last timestamp to send), not %s", f.EndOffset)
	case f.EndOffset < f.StartOffset:
		l.errorf(join(path, "end_offset"), "must be at least start_offset (%s), not %s", f.StartOffset, f.EndOffset)
	}
	if !f.AbsoluteTimestamps {
		return
	}
	switch {
	case f.StartOffset > 0:
		l.errorf(join(path, "absolute_timestamps"), "cannot be used with start_offset, which makes that timestamp time 0; keep one")
	case format.WallClock:
		l.errorf(join(path, "absolute_timestamps"), "%s timestamps are wall-clock times, not offsets from a start; remove absolute_timestamps", f.Format)
	}
}
