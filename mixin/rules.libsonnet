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
        // time a day earlier means nothing for them.
        name: 'inferprobe-latency-regression-statistics',
        local l = c.latency,
        local probe = m(['phase="probe"']),
        rules: std.flattenArrays([
          local rate = lib.rateRecord(x.metric, l.window);
          [
            { record: rate, expr: lib.histogramRate(x.metric, probe, l.window) + '\n' },
            { record: lib.bodyRecord(x.metric, l.window), expr: lib.gmeanQuantiles(l.body.quantiles, rate) + '\n' },
            { record: lib.tailRecord(x.metric, l.tail.quantile, l.tail.window), expr: lib.spanQuantile(l.tail.quantile, rate, l.window, l.tail.window) + '\n' },
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
            ||| % [m(['phase="probe"']), w, m(['phase="probe"', 'outcome!="cancelled"']), w],
          }
          for w in lib.burnRateWindows(c.burnRates)
        ],
      },
    ],
  },
}
