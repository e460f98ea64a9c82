package simulator

import "time"

// The capacity model: what the simulator's time to first token is under a
// closed loop of a given concurrency, so that a search for the highest
// concurrency within a TTFT SLO has a known answer to be checked against.
//
// It holds when every request has the same prompt and output lengths (a
// synthetic workload with no spread, output pinned by ignore_eos), the
// profile is constant with no errors or stalls, and MaxConcurrency is set.
// A request waits in the FIFO queue for one of the S = MaxConcurrency
// slots, then gets its first token t0 = TTFT + PrefillPerToken × prompt
// tokens later (plus TokensPerChunk−1 ITLs when a chunk holds several
// tokens) and holds the slot for d = TTFT + PrefillPerToken × prompt tokens
// + (output tokens − 1) × ITL. With C clients, C ≤ S never queue; above S
// the slots free together every d, and of the S requests admitted at each
// such wave, C − k·S waited k = ⌈C/S⌉ − 1 waves (the rest k − 1): the
// clients coming back from the wave join the queue behind those still
// waiting.

// TTFTQuantile is the time to first token at quantile q (0 to 1) of a
// closed loop of concurrency clients sending requests of promptTokens and
// outputTokens, in the capacity model's steady state.
func (c Config) TTFTQuantile(concurrency, promptTokens, outputTokens int, q float64) time.Duration {
	p := c.Profile
	t0 := p.TTFT + time.Duration(promptTokens)*p.PrefillPerToken
	first := t0 + time.Duration(min(max(c.TokensPerChunk, 1), outputTokens)-1)*p.ITL
	s := c.MaxConcurrency
	if s == 0 || concurrency <= s {
		return first
	}
	k := (concurrency+s-1)/s - 1
	// The share of requests that waited k waves; the quantile is among
	// them when more than 1 − q of the requests are.
	if share := float64(concurrency-k*s) / float64(s); share <= 1-q {
		k--
	}
	return first + time.Duration(k)*c.serviceTime(promptTokens, outputTokens)
}

// serviceTime is how long a request holds its slot: d in the model.
func (c Config) serviceTime(promptTokens, outputTokens int) time.Duration {
	p := c.Profile
	return p.TTFT + time.Duration(promptTokens)*p.PrefillPerToken + time.Duration(outputTokens-1)*p.ITL
}

// Capacity is the highest closed-loop concurrency whose TTFT at quantile q
// stays below slo, in the capacity model: 0 when not even one client's
// does, −1 when no concurrency breaks it (no slot limit, or requests that
// take no time).
func (c Config) Capacity(slo time.Duration, q float64, promptTokens, outputTokens int) int {
	if c.TTFTQuantile(1, promptTokens, outputTokens, q) >= slo {
		return 0
	}
	if c.MaxConcurrency == 0 || c.serviceTime(promptTokens, outputTokens) <= 0 {
		return -1
	}
	// Each MaxConcurrency clients more add at most one wave, so this ends.
	n := c.MaxConcurrency
	for c.TTFTQuantile(n+1, promptTokens, outputTokens, q) < slo {
		n++
	}
	return n
}
