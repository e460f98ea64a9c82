package traffic

import "time"

// Models are the servers the shipped rules are tuned and checked on. Each is hard on the rules
// in its own way; all three have a daily cycle, weekends and day-to-day jitter.
func Models() []Server {
	return []Server{
		{
			// A busy chat endpoint: a wide lognormal body whose median grows 60 % at the daily
			// peak, and an exponential queueing tail on up to 8 % of requests.
			Name:       "queueing",
			TTFTMedian: 150 * time.Millisecond, TTFTSigma: 0.45, TTFTLoad: 0.6,
			TailShare: 0.08, TailMean: 600 * time.Millisecond,
			ITLMedian: 25 * time.Millisecond, ITLSigma: 0.2, ITLLoad: 0.5, OutputTokens: 120,
			ErrorRatio: 0.001,
			PeakHour:   15, WeekendLoad: 0.5, DayJitter: 0.15,
			TTFTSLO: 5 * time.Second, ITLSLO: 200 * time.Millisecond,
		},
		{
			// Long prompts of varied length: a very wide body and a Pareto tail (shape 1.5,
			// infinite variance) on 3 % of requests.
			Name:       "heavy-tail",
			TTFTMedian: 400 * time.Millisecond, TTFTSigma: 0.5, TTFTLoad: 0.3,
			TailShare: 0.03, TailMean: 2 * time.Second, TailShape: 1.5,
			ITLMedian: 40 * time.Millisecond, ITLSigma: 0.3, ITLLoad: 0.3, OutputTokens: 250,
			ErrorRatio: 0.001,
			PeakHour:   10, WeekendLoad: 0.3, DayJitter: 0.15,
			TTFTSLO: 20 * time.Second, ITLSLO: 500 * time.Millisecond,
		},
		{
			// A small deployment near its limit: bursts of queueing, six a day of 90 s on
			// average, in which every TTFT is 2.5x longer.
			Name:       "bursty",
			TTFTMedian: 80 * time.Millisecond, TTFTSigma: 0.3, TTFTLoad: 0.8,
			TailShare: 0.05, TailMean: 300 * time.Millisecond,
			ITLMedian: 15 * time.Millisecond, ITLSigma: 0.15, ITLLoad: 0.8, OutputTokens: 80,
			ErrorRatio: 0.001,
			PeakHour:   20, WeekendLoad: 0.6, DayJitter: 0.15,
			BurstsPerDay: 6, BurstLength: 90 * time.Second, BurstFactor: 2.5,
			TTFTSLO: 3 * time.Second, ITLSLO: 150 * time.Millisecond,
		},
	}
}
