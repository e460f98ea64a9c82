// The mixin's config block. Override any field from your own jsonnet:
//
//   (import 'github.com/inferprobe/inferprobe/mixin/mixin.libsonnet') + {
//     _config+:: { selector: 'job="llm-probes"', goodputObjective: 0.995 },
//   }
//
// `go test ./mixin/ -update` writes alerts/inferprobe-rules.yml and dashboards/*.json from the
// defaults below; `go test ./mixin/ ./dashboards/` fails when the committed files drift.
{
  _config+:: {
    // Label matchers of every inferprobe series the rules and dashboards read: the job name your
    // scrape config gives inferprobe. The dashboards add their own job/instance variables inside it.
    selector: 'job="inferprobe"',

    // runbook_url of an alert: the pattern with %s replaced by the lowercase alert name.
    runbookURLPattern: 'https://github.com/inferprobe/inferprobe/blob/main/alerts/RUNBOOK.md#%s',

    // The severity label values, as stock Alertmanager routing trees match them:
    // critical pages a human now, warning opens a ticket, info only annotates.
    severities: { critical: 'critical', warning: 'warning', info: 'info' },

    // Goodput SLO of every probe's target: the share of finished probe requests (cancelled ones
    // excluded) that must succeed and meet every SLO of their probe, over sloPeriod.
    goodputObjective: 0.99,
    sloPeriod: '30d',

    // Multi-window, multi-burn-rate alerts (Google SRE workbook, "Alerting on SLOs"): an alert
    // fires when the error ratio is above factor x (1 - goodputObjective) over both the long and
    // the short window. 14.4x over 1h spends 2 % of a 30d budget; 6x over 6h, 5 %; 3x over 1d,
    // 10 %; 1x over 3d, 10 %.
    burnRates: [
      { severity: 'critical', long: '1h', short: '5m', factor: 14.4 },
      { severity: 'critical', long: '6h', short: '30m', factor: 6 },
      { severity: 'warning', long: '1d', short: '2h', factor: 3 },
      { severity: 'warning', long: '3d', short: '6h', factor: 1 },
    ],

    // Latency regressions, tuned on the backtest's traffic models (alerts/README.md has the
    // power table). Probes are few, so the alerts judge statistics that hold at the lowest probe
    // rate they support, 0.2 req/s, where a window of 20m holds 240 requests. Every statistic
    // derives from one recorded rate of each latency histogram over window.
    //
    // body (critical): the typical request, as the geometric mean of the quartiles over window
    // (a p99 over 240 requests is about the 3rd-largest: it cannot carry a page). It pages on a
    // step: the statistic now against its mean over the `before` preceding the window, more than
    // factor x the change the same hours showed baselineOffsets earlier (the larger of the two,
    // each over shapeWindow around the same time of day). Comparing with the same day's recent
    // past cancels a day that is busier or quieter than the day before; comparing the change
    // with earlier days' change cancels the daily cycle. The step must also be sigmas standard
    // errors of the statistic clear of its noise (from the window's histogram: its request
    // count and how fast ln of each quartile moves over quartile -/+ slopeDelta), so that a wide
    // or bimodal latency at a low probe rate needs a larger step to page. Once firing, it keeps
    // firing while the statistic is above levelFactor x the larger of its means over
    // baselineWindow around the same time baselineOffsets earlier, so that a regression that
    // lasts stays paged once the step is the recent past; the level alone starts a page only
    // above levelAloneFactor (a day busier than the day and week before moves it by a quarter).
    // tail (warning): the p99 over an hour, where the hour holds minSamples (so only at about
    // 0.5 req/s and faster), against its mean over tail.baselineWindow around the same time
    // baselineOffsets earlier (the larger of the two).
    latency: {
      window: '20m',
      baselineOffsets: ['1d', '7d'],
      body: { quantiles: [0.25, 0.5, 0.75], before: '2h', shapeWindow: '1h', factor: 1.2, sigmas: 4, slopeDelta: 0.1, baselineWindow: '2h', levelFactor: 1.25, levelAloneFactor: 2, minSamples: 100 },
      tail: { quantile: 0.99, window: '1h', baselineWindow: '4h', factor: 1.5, minSamples: 1500, 'for': '10m' },
    },

    // Failed requests (errors, not SLO misses: the burn-rate alerts count those): a critical page
    // when more than threshold of the requests over window failed and at least minErrors did,
    // so that at 0.2 req/s one error in a quiet window is not a 1 % error rate.
    errorRatio: { threshold: 0.03, window: '10m', minErrors: 5 },

    // Capacity (warning): a search burst's answer, inferprobe_capacity_concurrency, below share x
    // its own median over window (the median of the value over time: a scheduled search every day
    // has about 7 answers in 7d). A search's answer moves by steps of its bracket (5 % or one), so a
    // share well below that is a real loss, not the search's own resolution.
    capacity: { share: 0.7, window: '7d' },

    // Dashboards: the GPU series of the demo's simulated GPUs carry this label (value "true");
    // GPU panels exclude them unless the viewer picks "include" in the simulated variable.
    simulatedGPULabel: 'simulated',
  },
}
