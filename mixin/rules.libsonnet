// Recording rules: latency quantiles and the goodput error ratios the burn-rate alerts read.
local lib = import 'lib.libsonnet';

{
  prometheusRules+:: {
    local c = $._config,
    local m = lib.matchers(c.selector),
    groups+: [
      {
        name: 'inferprobe-latency-quantiles',
        rules: [
          // level:metric:operations. Quantiles over 5m, per target, model and phase, from the
          // native histogram or the classic buckets. A 5m rate needs two samples in its window:
          // scrape inferprobe at least every 2m.
          {
            record: lib.tailRecord(x.metric, q, '5m'),
            expr: lib.quantile(q, x.metric, m([]), '5m') + '\n',
          }
          for x in lib.latencyMetrics
          for q in [0.5, 0.9, 0.99]
        ],
      },
      {
        // The statistics the latency regression alerts compare, over the current and the
        // baseline windows, probes only: bursts and bench runs are not continuous, so the same
        // time a day earlier means nothing for them. A statistic is recorded only when its window
        // holds the requests it needs, so that a baseline never averages in the noise of a
        // window that was nearly empty (the first minutes of a new target, a probe paused).
        name: 'inferprobe-latency-regression-statistics',
        local l = c.latency,
        local probe = m(['phase="probe"']),
        local okProbes = m(['phase="probe"', 'outcome="ok"']),
        rules: std.flattenArrays([
          local rate = lib.rateRecord(x.metric, l.window);
          [
            { record: rate, expr: lib.histogramRate(x.metric, probe, l.window) + '\n' },
            {
              record: lib.bodyRecord(x.metric, l.window),
              expr: lib.atLeast(lib.gmeanQuantiles(l.body.quantiles, rate), lib.succeeded(okProbes, l.window), l.body.minSamples),
            },
            {
              record: lib.slopesRecord(x.metric, l.window),
              expr: lib.quantileSlopes(l.body.quantiles, l.body.slopeDelta, rate) + '\n',
            },
            {
              record: lib.stderrRecord(x.metric, l.window),
              expr: lib.atLeast(lib.gmeanQuantilesStderr(l.body.quantiles, lib.slopesRecord(x.metric, l.window), lib.succeeded(okProbes, l.window)), lib.succeeded(okProbes, l.window), l.body.minSamples),
            },
            {
              // ln of the body's step (the statistic now over its mean over the `before`
              // preceding the window) less ln of the larger of the steps the same hours took
              // baselineOffsets earlier: how much more it stepped than the daily cycle does. The
              // body alert judges this against the statistic's standard error.
              local s = lib.bodyRecord(x.metric, l.window),
              local earlierStep(o) =
                '    label_replace(\n      avg_over_time(%s[%s] offset %s)\n        / avg_over_time(%s[%s] offset %s),\n      "baseline", "%s", "", ""\n    )'
                % [s, l.body.shapeWindow, lib.centredOffset(o, l.body.shapeWindow), s, l.body.before, lib.duration(lib.seconds(o) + lib.seconds(l.window)), o],
              record: lib.stepRecord(x.metric, l.window),
              expr: |||
                ln(%(s)s / avg_over_time(%(s)s[%(before)s] offset %(w)s))
                - ln(
                  max by (target, model, phase) (
                %(earlier)s
                  )
                )
              ||| % { s: s, before: l.body.before, w: l.window, earlier: std.join('\n    or\n', [earlierStep(o) for o in l.baselineOffsets]) },
            },
            {
              record: lib.tailRecord(x.metric, l.tail.quantile, l.tail.window),
              expr: lib.atLeast(lib.spanQuantile(l.tail.quantile, rate, l.window, l.tail.window), lib.succeeded(okProbes, l.tail.window), l.tail.minSamples),
            },
          ]
          for x in lib.latencyMetrics
        ]),
      },
      {
        name: 'inferprobe-slo-goodput',
        // The share of finished probe requests (cancelled excluded) that were not good (failed, or
        // missed an SLO of their probe), per target and model, over every window a burn-rate
        // alert reads. Burst runs load their targets on purpose and are left out.
        rules: [
          {
            record: lib.errorRatioRecord(w),
            expr: |||
              1 - (
                sum by (target, model) (rate(inferprobe_good_requests_total%s[%s]))
                  /
                sum by (target, model) (rate(inferprobe_requests_total%s[%s]))
              )
            ||| % [m(['phase="probe"']), w, m(['phase="probe"', 'outcome=~"ok|error"']), w],
          }
          for w in lib.burnRateWindows(c.burnRates)
        ],
      },
    ],
  },
}
