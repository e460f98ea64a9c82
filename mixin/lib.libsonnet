// Helpers shared by the rules and alerts.
{
  // matchers(selector)(extra) renders {selector, extra...}.
  matchers(selector):: function(extra) '{' + std.join(', ', [selector] + extra) + '}',

  errorRatioRecord(window):: 'target_model:inferprobe_goodput_errors_per_request:ratio_rate' + window,

  // Every window the burn-rate pairs use, shortest first, each once.
  burnRateWindows(burnRates)::
    std.set([w for b in burnRates for w in [b.long, b.short]], self.seconds),

  // seconds('1h30m') is 5400: the Prometheus durations the config block uses (d, h, m, s).
  seconds(d)::
    local parts = std.split(std.strReplace(std.strReplace(std.strReplace(std.strReplace(d, 'd', 'd '), 'h', 'h '), 'm', 'm '), 's', 's '), ' ');
    std.foldl(function(acc, p) if p == '' then acc else
      acc + std.parseInt(std.substr(p, 0, std.length(p) - 1)) * { d: 86400, h: 3600, m: 60, s: 1 }[std.substr(p, std.length(p) - 1, 1)], parts, 0),

  // duration(5400) is '1h30m'.
  duration(s)::
    local d = std.floor(s / 86400), h = std.floor(s % 86400 / 3600), m = std.floor(s % 3600 / 60), r = s % 60;
    std.join('', [if d > 0 then '%dd' % d else '', if h > 0 then '%dh' % h else '', if m > 0 then '%dm' % m else '', if r > 0 then '%ds' % r else '']),

  // The offset that centres a window of length window on the time offset earlier.
  centredOffset(offset, window):: self.duration(self.seconds(offset) - self.seconds(window) / 2),

  // A histogram's statistics in both of the forms Prometheus may hold it in: the native
  // histogram, or (on a Prometheus that does not ingest native histograms) the classic _bucket
  // and _count series. `or` keeps the native result where both exist.
  nativeOrClassic(native, classic):: '(\n  %s\nor\n  %s\n)' % [native, classic],

  // The q-quantile of metric's requests matching sel over window, per target, model and phase.
  quantile(q, metric, sel, window):: self.nativeOrClassic(
    'histogram_quantile(%g, sum by (target, model, phase) (rate(%s%s[%s])))' % [q, metric, sel, window],
    'histogram_quantile(%g, sum by (target, model, phase, le) (rate(%s_bucket%s[%s])))' % [q, metric, sel, window],
  ),

  // The rate of metric's histogram over window, per target, model and phase: the native
  // histogram, or the classic buckets (with their le label) where there is no native one. The
  // latency statistics of the regression alerts all derive from this one recorded rate, so that
  // each evaluation decodes the window's histograms once, not once per quantile and window.
  histogramRate(metric, sel, window)::
    '(\n  sum by (target, model, phase) (rate(%s%s[%s]))\nor on (target, model, phase)\n  sum by (target, model, phase, le) (rate(%s_bucket%s[%s]))\n)' % [metric, sel, window, metric, sel, window],

  // The geometric mean of the qs-quantiles of a recorded histogram rate: the body of the
  // distribution, a steadier statistic than any one quantile on few requests.
  gmeanQuantiles(qs, rate)::
    'exp((\n    %s\n  ) / %d)' % [std.join('\n    + ', ['ln(histogram_quantile(%g, %s))' % [q, rate] for q in qs]), std.length(qs)],

  // How fast ln of each qs-quantile of a recorded histogram rate moves with the quantile: the
  // change of ln of its quantiles over q - delta .. q + delta, over 2 delta, one series a
  // quantile (label quantile). 1 / this is the density of ln latency at the quantile.
  quantileSlopes(qs, delta, rate)::
    std.join('\nor\n', [
      'label_replace(\n  (ln(histogram_quantile(%g, %s)) - ln(histogram_quantile(%g, %s))) / %g,\n  "quantile", "%g", "", ""\n)' % [q + delta, rate, q - delta, rate, 2 * delta, q]
      for q in qs
    ]),

  // The standard error of ln of gmeanQuantiles over count requests, from the asymptotic
  // covariance of sample quantiles, min(p, q) (1 - max(p, q)) / (n f(p) f(q)), with 1 / f read
  // from the recorded quantileSlopes. Where the requests are few, or a quantile sits where the
  // density is low (between the modes of a bimodal latency), the error is large.
  gmeanQuantilesStderr(qs, slopes, count)::
    local n = std.length(qs);
    local g(q) = 'sum without (quantile) (%s{quantile="%g"})' % [slopes, q];
    local terms = [
      '%g * %s %s' % [(if i == j then 1 else 2) * std.min(qs[i], qs[j]) * (1 - std.max(qs[i], qs[j])), g(qs[i]), if i == j then '^ 2' else '* ' + g(qs[j])]
      for i in std.range(0, n - 1)
      for j in std.range(i, n - 1)
    ];
    'sqrt(\n    (\n      %s\n    )\n  / on (target, model, phase)\n    %s\n) / %d' % [std.join('\n      + ', terms), count, n],

  // The q-quantile over span of a recorded histogram rate over window, span a multiple of window:
  // the sum of the rates of the consecutive windows that make up span.
  spanQuantile(q, rate, window, span)::
    local n = self.seconds(span) / self.seconds(window);
    'histogram_quantile(%g,\n  %s\n)' % [q, std.join('\n  + ', [rate] + ['%s offset %s' % [rate, self.duration(i * self.seconds(window))] for i in std.range(1, n - 1)])],

  // expr where count is at least n, per target, model and phase.
  atLeast(expr, count, n):: '%s\nand on (target, model, phase)\n  %s >= %d\n' % [expr, count, n],

  // How many requests matching sel succeeded over window: the requests a latency histogram holds.
  // From the counter, not the histogram's count: the same number, without decoding every
  // histogram sample in the window at every evaluation.
  succeeded(sel, window):: 'sum by (target, model, phase) (increase(inferprobe_requests_total%s[%s]))' % [sel, window],

  // The latency histograms the regression alerts judge, with the words their alerts use.
  latencyMetrics:: [
    { metric: 'inferprobe_time_to_first_token_seconds', name: 'TTFT', what: 'TTFT' },
    { metric: 'inferprobe_inter_token_latency_seconds', name: 'ITL', what: 'Inter-token latency' },
    { metric: 'inferprobe_request_duration_seconds', name: 'RequestDuration', what: 'Request duration' },
  ],

  // Recorded statistics of the latency regression alerts.
  rateRecord(metric, window):: 'target_model_phase:%s:rate%s' % [metric, window],
  bodyRecord(metric, window):: 'target_model_phase:%s:quartiles_gmean_rate%s' % [metric, window],
  stepRecord(metric, window):: 'target_model_phase:%s:quartiles_gmean_step_excess_ln_rate%s' % [metric, window],
  slopesRecord(metric, window):: 'target_model_phase:%s:ln_quantile_slope_rate%s' % [metric, window],
  stderrRecord(metric, window):: 'target_model_phase:%s:quartiles_gmean_ln_stderr_rate%s' % [metric, window],
  tailRecord(metric, q, window):: 'target_model_phase:%s:p%d_rate%s' % [metric, q * 100, window],

  runbook(config, alert):: config.runbookURLPattern % std.asciiLower(alert),
}
