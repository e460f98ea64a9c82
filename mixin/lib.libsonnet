// Helpers shared by the rules and alerts.
{
  // matchers(selector)(extra) renders {selector, extra...}.
  matchers(selector):: function(extra) '{' + std.join(', ', [selector] + extra) + '}',

  errorRatioRecord(window):: 'target_model:inferprobe_goodput_errors_per_request:ratio_rate' + window,

  // Every window the burn-rate pairs use, shortest first, each once.
  burnRateWindows(burnRates)::
    local seconds(d) =
      local unit = std.substr(d, std.length(d) - 1, 1), n = std.parseInt(std.substr(d, 0, std.length(d) - 1));
      n * { m: 60, h: 3600, d: 86400 }[unit];
    std.set([w for b in burnRates for w in [b.long, b.short]], seconds),

  runbook(config, alert):: config.runbookURLPattern % std.asciiLower(alert),
}
