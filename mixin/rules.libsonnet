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
          // level:metric:operations. Native-histogram quantiles over 5m, per target, model and
          // phase. A 5m rate needs two samples in its window: scrape inferprobe at least every 2m.
          {
            record: 'target_model_phase:%s:p%d_rate5m' % [metric, q * 100],
            expr: 'histogram_quantile(%.2f, sum by (target, model, phase) (rate(%s%s[5m])))' % [q, metric, m([])],
          }
          for metric in ['inferprobe_time_to_first_token_seconds', 'inferprobe_inter_token_latency_seconds', 'inferprobe_request_duration_seconds']
          for q in [0.5, 0.9, 0.99]
        ],
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
