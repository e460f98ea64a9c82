package simulator

import (
	"testing"
	"time"

	"github.com/alecthomas/kingpin/v2"
)

func TestAddFlags(t *testing.T) {
	parse := func(args ...string) *Config {
		t.Helper()
		app := kingpin.New("test", "")
		cmd := app.Command("simulate", "")
		cfg := AddFlags(cmd)
		if _, err := app.Parse(append([]string{"simulate"}, args...)); err != nil {
			t.Fatalf("parse %v: %v", args, err)
		}
		if _, err := New(*cfg, nil); err != nil {
			t.Fatalf("New with flags %v: %v", args, err)
		}
		return cfg
	}

	def := parse()
	want := Config{
		Profile:          Profile{TTFT: 100 * time.Millisecond, ITL: 10 * time.Millisecond, Distribution: Constant, Jitter: 0.2, StallDuration: 5 * time.Second},
		Seed:             42,
		Model:            DefaultModel,
		MaxConcurrency:   256,
		DefaultMaxTokens: 256,
		NaturalTokens:    128,
		TokensPerChunk:   1,
	}
	if *def != want {
		t.Errorf("defaults:\n got %+v\nwant %+v", *def, want)
	}

	got := parse("--sim.ttft=1s", "--sim.prefill-per-token=50us", "--sim.itl=20ms", "--sim.distribution=lognormal",
		"--sim.jitter=0.5", "--sim.error-rate=0.01", "--sim.stall-rate=0.1", "--sim.stall-duration=40s",
		"--sim.seed=7", "--sim.model=m", "--sim.max-concurrency=0", "--sim.default-max-tokens=64",
		"--sim.natural-tokens=32", "--sim.tokens-per-chunk=4", "--sim.reasoning-tokens=16",
		"--sim.prefill-per-image=20ms", "--sim.prefill-per-audio-second=5ms")
	want = Config{
		Profile: Profile{TTFT: time.Second, PrefillPerToken: 50 * time.Microsecond, ITL: 20 * time.Millisecond,
			Distribution: LogNormal, Jitter: 0.5, ErrorRate: 0.01, StallRate: 0.1, StallDuration: 40 * time.Second},
		Seed: 7, Model: "m", MaxConcurrency: 0, DefaultMaxTokens: 64, NaturalTokens: 32, TokensPerChunk: 4, ReasoningTokens: 16,
		PrefillPerImage: 20 * time.Millisecond, PrefillPerAudioSecond: 5 * time.Millisecond,
	}
	if *got != want {
		t.Errorf("overrides:\n got %+v\nwant %+v", *got, want)
	}

	app := kingpin.New("test", "")
	AddFlags(app.Command("simulate", ""))
	if _, err := app.Parse([]string{"simulate", "--sim.distribution=uniform"}); err == nil {
		t.Error("unknown distribution accepted")
	}
}
