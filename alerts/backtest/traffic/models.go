package traffic

import "time"

// Version numbers the models' behaviour, which the power table's rows record: raise it with any
// change that moves a model's records, so that rows measured before are marked until measured
// again. Version 1's load stepped at midnight; version 2's moves over the 4 hours around it.
const Version = 2

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

// HeldOut are servers the shipped rules were not tuned on, each unlike the tuning models in a
// way that is hard on the rules: a second mode of long prompts, a wider body with a heavier
// tail, day-to-day jitter of up to 25 % and a steeper daily cycle. The power table's held-out
// rows show whether what the rules were tuned to see holds on traffic they have not seen.
func HeldOut() []Server {
	return []Server{
		{
			// Chat with a share of long-document prompts: 30 % of requests take 4x the TTFT,
			// an exponential tail on up to 5 %, and three short bursts of queueing a day.
			Name:       "bimodal",
			TTFTMedian: 120 * time.Millisecond, TTFTSigma: 0.35, TTFTLoad: 0.5,
			LongShare: 0.3, LongFactor: 4,
			TailShare: 0.05, TailMean: 800 * time.Millisecond,
			ITLMedian: 30 * time.Millisecond, ITLSigma: 0.25, ITLLoad: 0.4, OutputTokens: 200,
			ErrorRatio: 0.002,
			PeakHour:   9, WeekendLoad: 0.4, DayJitter: 0.25,
			BurstsPerDay: 3, BurstLength: 120 * time.Second, BurstFactor: 2,
			TTFTSLO: 5 * time.Second, ITLSLO: 200 * time.Millisecond,
		},
		{
			// A large model near saturation at its peak: the median TTFT doubles between night
			// and peak, a wide body (sigma 0.6) and a Pareto tail of shape 1.2 on 4 %.
			Name:       "saturating",
			TTFTMedian: time.Second, TTFTSigma: 0.6, TTFTLoad: 1,
			TailShare: 0.04, TailMean: 4 * time.Second, TailShape: 1.2,
			ITLMedian: 60 * time.Millisecond, ITLSigma: 0.35, ITLLoad: 0.6, OutputTokens: 300,
			ErrorRatio: 0.001,
			PeakHour:   18, WeekendLoad: 0.7, DayJitter: 0.2,
			TTFTSLO: 30 * time.Second, ITLSLO: time.Second,
		},
	}
}
