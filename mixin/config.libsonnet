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

    // Relative p99 regressions: the current window's p99 against the same window 1d (7d) earlier.
    regression: { factor: 1.5, window: '30m', minSamples: 100, 'for': '15m' },

    // Error ratio over errorRatio.window, with a minimum of requests.
    errorRatio: { threshold: 0.05, window: '15m', minRequests: 20, 'for': '10m' },

    // Dashboards: the GPU series of the demo's simulated GPUs carry this label (value "true");
    // GPU panels exclude them unless the viewer picks "include" in the simulated variable.
    simulatedGPULabel: 'simulated',
  },
}
