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
  tailRecord(metric, q, window):: 'target_model_phase:%s:p%d_rate%s' % [metric, q * 100, window],

  runbook(config, alert):: config.runbookURLPattern % std.asciiLower(alert),
}
