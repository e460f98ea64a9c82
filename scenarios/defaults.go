package scenarios

import "time"

// Defaults fill fields that the file leaves out (or writes as null). A field
// written with a zero value keeps it and is validated, so "timeout: 0s" is an
// error rather than silently 120s, and "seed: 0" is seed 0.
const (
	defaultSeed         = 1
	defaultTimeout      = 120 * time.Second
	defaultStallTimeout = 30 * time.Second
	defaultInputTokens  = 128
	defaultOutputTokens = 64
)

func (c *Config) setDefaults(l *loader) {
	if !l.written("global.seed") {
		c.Global.Seed = defaultSeed
	}
	for name, t := range c.Targets {
		t.setDefaults(l.under(join("targets", name)))
	}
	for name, p := range c.Probes {
		p.setDefaults(l.under(join("probes", name)))
	}
	for name, b := range c.Bursts {
		b.setDefaults(l.under(join("bursts", name)))
	}
}

func (t *Target) setDefaults(written func(field string) bool) {
	if !written("endpoint") {
		t.Endpoint = DefaultEndpoint
	}
	if !written("stream") {
		t.Stream = new(true)
	}
	if !written("timeout") {
		t.Timeout = Duration(defaultTimeout)
	}
	if !written("stall_timeout") {
		t.StallTimeout = Duration(defaultStallTimeout)
		if t.Timeout > 0 {
			// Capped so that a short timeout alone is not an error about a field not written.
			t.StallTimeout = min(t.StallTimeout, t.Timeout)
		}
	}
}

func (p *Probe) setDefaults(written func(field string) bool) {
	if !written("arrival.pattern") {
		p.Arrival.Pattern = ArrivalPoisson
	}
	p.Dataset.setDefaults(written)
}
