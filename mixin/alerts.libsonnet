// Alerting rules. Each alert has a severity from _config.severities, a summary, a templated
// description and a runbook_url (alerts/RUNBOOK.md has a section per alert).
local lib = import 'lib.libsonnet';

{
  prometheusAlerts+:: {
    local c = $._config,
    local m = lib.matchers(c.selector),
    local sev = c.severities,
    local alert(name, severity, expr, forDuration, summary, description) = {
      alert: name,
      expr: expr,
      [if forDuration != null then 'for']: forDuration,
      labels: { severity: severity },
      annotations: { summary: summary, description: description, runbook_url: lib.runbook(c, name) },
    },

    local l = c.latency,
    local baselineWords = std.join(' and ', l.baselineOffsets),

    // The larger of the means of a recorded statistic over window centred on the same time of
    // day baselineOffsets earlier. A baseline with no data (rules younger than a week) drops out;
    // with none at all, an alert that needs one cannot fire. Over recorded statistics, so that a
    // baseline costs its window's evaluations, not a rate over hours of histograms at every
    // evaluation.
    local baseline(record, window) =
      'max by (target, model, phase) (\n%s\n)' % std.join('\n  or\n', [
        '  label_replace(avg_over_time(%s[%s] offset %s), "baseline", "%s", "", "")' % [record, window, lib.centredOffset(o, window), o]
        for o in l.baselineOffsets
      ]),

    // The body alert, on the typical request (its statistic recorded only over windows of at
    // least minSamples requests). It starts on a step: the statistic over the last window
    // against its mean over the `before` preceding it, more than factor x the larger of the
    // steps the same hours took baselineOffsets earlier, and more than sigmas standard errors of
    // the statistic (recorded from the window's histogram) clear of its noise, so that a wide or
    // bimodal latency at a low probe rate needs a larger step. Once firing, it keeps firing
    // while the statistic is above levelFactor x the larger of its means around the same time
    // of day baselineOffsets earlier, so that a regression that lasts stays paged after its
    // step has become the recent past. The level alone starts a page only above
    // levelAloneFactor: a day busier than the day and the week before moves it by a quarter
    // without any step, while a regression whose step went unseen (the probe paused across a
    // deploy) must still page. "Firing" is read from ALERTS over the last 10m, so that a group
    // evaluated every 5m (the left-open lookback drops a sample exactly 5m old) still sees it.
    // Its value is the step's excess over the earlier days' (the
    // level's ratio while only the level holds).
    local b = l.body,
    local bodyRegression(x) =
      local s = lib.bodyRecord(x.metric, l.window);
      local e = lib.stepRecord(x.metric, l.window);
      alert(
        'Inferprobe%sRegression' % x.name, sev.critical,
        |||
          (
              exp(%(e)s) > %(f)g
            and on (target, model, phase)
              %(e)s > %(k)g * %(se)s
          or
              %(s)s
                / %(base)s
            > %(lf)g
            and on (target, model, phase)
              max_over_time(ALERTS{alertname="%(name)s", alertstate="firing"}[10m])
          or
              %(s)s
                / %(base)s
            > %(laf)g
          )
        ||| % {
          name: 'Inferprobe%sRegression' % x.name,
          s: s, e: e, se: lib.stderrRecord(x.metric, l.window), f: b.factor, lf: b.levelFactor, laf: b.levelAloneFactor,
          // The step's error: the window's, the `before` mean's (about 1/6 of its variance) and
          // the earlier days' shape and mean (1/3 and 1/6).
          k: std.parseJson(std.format('%.2f', b.sigmas * std.sqrt(1 + 1 / 6 + 1 / 3 + 1 / 6))),
          base: std.strReplace(baseline(s, b.baselineWindow), '\n', '\n        '),
        },
        null,
        '%s of typical probe requests stepped up or is above the same time of day earlier' % x.what,
        ('%s of target {{ $labels.target }}, model {{ $labels.model }} (probes; the geometric mean of its quartiles over the last %s) regressed {{ printf "%%.2f" $value }}x. '
         + 'It pages when its step (the last %s against the %s before) is more than %gx the step of the same hours %s earlier and %g standard errors clear of noise, '
         + 'or when it is more than %gx its mean over the %s around the same time %s earlier; once paged, it fires while above %gx that mean.')
        % [x.what, l.window, l.window, b.before, b.factor, baselineWords, b.sigmas, b.levelAloneFactor, b.baselineWindow, baselineWords, b.levelFactor],
      ),

    // The tail alert: the p99 over tail.window above factor x the larger of its means over
    // tail.baselineWindow centred on the same time of day baselineOffsets earlier (the statistic is
    // recorded only over an hour of at least minSamples requests). Its value is the current p99.
    local t = l.tail,
    local tailRegression(x) =
      local r = lib.tailRecord(x.metric, t.quantile, t.window);
      local base = baseline(r, t.baselineWindow);
      alert(
        'Inferprobe%sTailRegression' % x.name, sev.warning,
        |||
          %(r)s
            > %(f)g * %(base)s
        ||| % { r: r, f: t.factor, base: std.strReplace(base, '\n', '\n    ') },
        t['for'],
        '%s p%d of probe requests regressed more than %gx against the same time of day earlier' % [x.what, t.quantile * 100, t.factor],
        '%s p%d of target {{ $labels.target }}, model {{ $labels.model }} (probes) is {{ $value | humanizeDuration }} over the last %s, more than %gx the larger of its means over the %s around the same time %s earlier.'
        % [x.what, t.quantile * 100, t.window, t.factor, t.baselineWindow, baselineWords],
      ),

    local budget = 1 - c.goodputObjective,
    // A burn-rate condition: both windows' error ratios above factor x the error budget.
    local burn(b) =
      '(\n  %s > %g\nand\n  %s > %g\n)' % [lib.errorRatioRecord(b.long), b.factor * budget, lib.errorRatioRecord(b.short), b.factor * budget],
    local burnAlert(name, severity, speed) =
      local pairs = [b for b in c.burnRates if b.severity == severity];
      alert(
        name, sev[severity], std.join('\nor\n', [burn(b) for b in pairs]) + '\n', '2m',
        'Target is burning its goodput error budget %s' % speed,
        ('{{ $value | humanizePercentage }} of the probe requests to target {{ $labels.target }}, model {{ $labels.model }} were not good (failed or missed an SLO) over the alert\'s long window; '
         + 'the objective of %g%% good over %s allows %g%%. Burn-rate windows: %s.')
        % [c.goodputObjective * 100, c.sloPeriod, budget * 100, std.join('; ', ['%gx over %s and %s' % [b.factor, b.long, b.short] for b in pairs])],
      ),

    local e = c.errorRatio,

    groups+: [
      {
        name: 'inferprobe-slo-burn-rate',
        rules: [
          burnAlert('InferprobeGoodputErrorBudgetBurnFast', 'critical', 'fast'),
          burnAlert('InferprobeGoodputErrorBudgetBurnSlow', 'warning', 'steadily'),
        ],
      },
      {
        name: 'inferprobe-latency-regressions',
        rules: [
          f(x)
          for x in lib.latencyMetrics
          for f in [bodyRegression, tailRegression]
        ],
      },
      {
        name: 'inferprobe-availability',
        rules: [
          alert(
            'InferprobeErrorRatioHigh', sev.critical,
            |||
              sum by (target, model, phase) (increase(inferprobe_request_errors_total%(s)s[%(w)s]))
                / sum by (target, model, phase) (increase(inferprobe_requests_total%(f)s[%(w)s]))
                > %(t)g
              and on (target, model, phase)
                sum by (target, model, phase) (increase(inferprobe_request_errors_total%(s)s[%(w)s])) >= %(n)d
            ||| % { s: m([]), f: m(['outcome=~"ok|error"']), w: e.window, t: e.threshold, n: e.minErrors },
            null,
            'More than %g%% of requests to an endpoint fail' % (e.threshold * 100),
            '{{ $value | humanizePercentage }} of the {{ $labels.phase }} requests to target {{ $labels.target }}, model {{ $labels.model }} failed over the last %s (threshold %g%%, at least %d failures).'
            % [e.window, e.threshold * 100, e.minErrors],
          ),
          alert(
            'InferprobeProbesAbsent', sev.critical,
            'absent_over_time(inferprobe_requests_total%s[10m])' % m(['phase="probe"']), '5m',
            'No inferprobe probe results at all',
            'Prometheus has had no inferprobe_requests_total{phase="{{ $labels.phase }}"} sample for at least 15m: inferprobe is down, not scraped, or no probe has finished a request. Every latency alert is blind.',
          ),
          alert(
            'InferprobeProbeStale', sev.warning,
            |||
              sum by (instance, target, model, scenario, phase) (increase(inferprobe_requests_total%(s)s[15m])) == 0
              and on (instance, target, model, scenario, phase)
                group by (instance, target, model, scenario, phase) (inferprobe_requests_total%(s)s)
            ||| % { s: m(['phase="probe"']) },
            '5m',
            'A probe is exported but has finished no request for 20m',
            'Probe {{ $labels.scenario }} (target {{ $labels.target }}, model {{ $labels.model }}) on {{ $labels.instance }} finished {{ $value }} requests in the last 15m, for at least 5m.',
          ),
        ],
      },
      {
        name: 'inferprobe-client-health',
        rules: [
          // info: the measurements need care, nothing is broken for users.
          alert(
            'InferprobeClientSaturated', sev.info, 'inferprobe_client_saturated%s == 1' % m([]), '10m',
            'inferprobe itself may be the bottleneck',
            'inferprobe on {{ $labels.instance }} has reported client saturation for 10m: its latencies may describe the client, not the server.',
          ),
          alert(
            'InferprobeWorkersCrashLooping', sev.warning, 'inferprobe_worker_crash_looping%s == 1' % m([]), '5m',
            'inferprobe worker processes keep dying',
            'inferprobe on {{ $labels.instance }} has had its workers crash-looping (at least 5 exits a minute) for 5m.',
          ),
          // GPU-less hosts export inferprobe_gpu_telemetry_up 0 forever; only a host where
          // telemetry worked within the last day alerts, so this never fires on them.
          alert(
            'InferprobeGPUTelemetryDown', sev.warning,
            |||
              inferprobe_gpu_telemetry_up%(s)s == 0
              and max_over_time(inferprobe_gpu_telemetry_up%(s)s[1d]) == 1
            ||| % { s: m([]) },
            '10m',
            'GPU telemetry stopped on a host where it worked',
            'inferprobe on {{ $labels.instance }} has read no GPU telemetry for 10m although it did within the last day.',
          ),
          alert(
            'InferprobeConfigReloadFailed', sev.warning, 'inferprobe_config_last_reload_successful%s == 0' % m([]), '5m',
            'inferprobe rejected its scenario file and kept the previous configuration',
            'The last reload of the scenario file by inferprobe on {{ $labels.instance }} failed; it has been running the previous configuration for at least 5m.',
          ),
        ],
      },
      {
        name: 'inferprobe-bursts',
        rules: [
          // The daemon judges each run against the earlier runs of its burst with bench --compare's
          // tests (p99 by bootstrap, the values as a whole by Mann-Whitney U, Holm-corrected at
          // 95 %) and exports the verdict; the alert fires on that verdict, not on a ratio, so
          // noise between runs does not fire it and a small steady shift does. The value is the
          // p99's change, for the description. The verdict stays until the next run replaces it.
          alert(
            'InferprobeBurstTTFTP99WorseThanEarlier', sev.warning,
            |||
              inferprobe_burst_last_regression_p99_change_ratio%(t)s
                and
              inferprobe_burst_last_regression%(t)s == 1
            ||| % { t: m(['metric="time_to_first_token"']) },
            null,
            "The last burst run's TTFT is significantly worse than its earlier runs",
            'The last run of burst {{ $labels.burst }} against target {{ $labels.target }} on {{ $labels.instance }} had a significantly worse time to first token than the earlier runs of that burst (p99 {{ $value | humanizePercentage }} higher; see the run\'s regression in the burst API).',
          ),
          // A search burst's answer against its own recent past: the same burst, target, recipe and
          // SLA (a changed SLA is a new series, with no past to fall from). The value is the answer.
          alert(
            'InferprobeCapacityDropped', sev.warning,
            |||
              inferprobe_capacity_concurrency%(s)s
                < %(share)g * quantile_over_time(0.5, inferprobe_capacity_concurrency%(s)s[%(w)s])
            ||| % { s: m([]), share: c.capacity.share, w: c.capacity.window },
            null,
            'The capacity within the SLA fell below its recent median',
            'The last capacity search of burst {{ $labels.burst }} against target {{ $labels.target }} on {{ $labels.instance }} found it carries {{ $value }} concurrent requests within its SLA ({{ $labels.sla }}), below %(pct)g %% of its median over the last %(w)s.' % { pct: 100 * c.capacity.share, w: c.capacity.window },
          ),
        ],
      },
    ],
  },
}
