package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/scenarios"
)

// saveScenario writes the run as an on-demand burst named bench, for
// inferprobe serve. The API key is read from INFERPROBE_API_KEY there, and
// credential headers are written as REDACTED for the user to fill in.
func saveScenario(f *benchFlags, sc *benchScenario, plan *finite.Plan) error {
	if plan.Warmup != nil && (plan.WarmupGrace != nil || f.load.warmup.ownLoad()) {
		return errors.New("a burst's warmup is sent at the burst's load and waits for its requests: drop the --warmup-* load and grace options to save the run")
	}
	t := *sc.cfg.Targets["bench"]
	if len(t.MoreURLs) > 0 {
		return errors.New("a scenario's target is one server, whose metrics are its own, so a run of several --url is not saved: save one run per --url")
	}
	p := sc.cfg.Probes["bench"]
	if t.APIKeyEnv != "" {
		t.APIKeyEnv = "INFERPROBE_API_KEY"
	}
	if t.Headers != nil {
		t.Headers = map[string]string{}
		for k, v := range sc.cfg.Targets["bench"].Headers {
			if scenarios.SensitiveHeader(k) {
				v = "REDACTED"
			}
			t.Headers[k] = v
		}
	}
	// Paths in a scenario are relative to the file's directory, not to
	// where bench ran.
	var err error
	if t.Tokenizer != "" {
		if t.Tokenizer, err = filepath.Abs(t.Tokenizer); err != nil {
			return err
		}
	}
	dataset := p.Dataset
	if dataset.File != nil {
		file := *dataset.File
		if file.Path, err = filepath.Abs(file.Path); err != nil {
			return err
		}
		dataset.File = &file
	}
	if s := dataset.Synthetic; s != nil && s.Images != nil && s.Images.Source != "" {
		synth, images := *s, *s.Images
		if images.Source, err = filepath.Abs(images.Source); err != nil {
			return err
		}
		synth.Images = &images
		dataset.Synthetic = &synth
	}
	burst := &scenarios.Burst{
		Target: "bench", OnDemand: true, Arrival: p.Arrival, Dataset: dataset, Params: p.Params, SLO: p.SLO,
		Requests: plan.Limit.Requests, Duration: scenarios.Duration(plan.Limit.Duration),
		Warmup: scenarios.Warmup{Requests: plan.WarmupLimit.Requests, Duration: scenarios.Duration(plan.WarmupLimit.Duration)},
	}
	cfg := &scenarios.Config{
		Global:  sc.cfg.Global,
		Targets: map[string]*scenarios.Target{"bench": &t},
		Bursts:  map[string]*scenarios.Burst{"bench": burst},
	}
	written := []string{"bursts.bench.on_demand"}
	for _, path := range sc.written {
		if strings.Contains(path, "[") {
			continue // a list's items: the list is written whole
		}
		if rest, ok := strings.CutPrefix(path, benchProbe+"."); ok {
			path = "bursts.bench." + rest
		}
		written = append(written, path)
	}
	// Each limit the run has; a burst, like the run, ends at whichever comes first.
	for path, set := range map[string]bool{
		"bursts.bench.duration":        plan.Limit.Duration > 0,
		"bursts.bench.requests":        plan.Limit.Requests > 0,
		"bursts.bench.warmup.requests": burst.Warmup.Requests > 0,
		"bursts.bench.warmup.duration": burst.Warmup.Duration > 0,
	} {
		if set {
			written = append(written, path)
		}
	}
	// A burst's grace period is finite; a run that waits for every request
	// leaves it at the burst's default.
	if plan.Grace >= 0 {
		burst.GracePeriod = scenarios.Duration(plan.Grace)
		written = append(written, "bursts.bench.grace_period")
	}
	b, err := scenarios.Marshal(cfg, written)
	if err != nil {
		return err
	}
	header := "# Written by: " + repeatCommand(f.args) + "\n" +
		"# Burst bench is the run; trigger it with POST /api/v1/bursts/bench (inferprobe serve --web.enable-burst-api),\n" +
		"# or give it a schedule (every: 6h, or a cron expression). Add probes to watch the target between bursts.\n"
	return os.WriteFile(f.saveScenario, append([]byte(header), b...), 0o644)
}
