// inferprobe's monitoring mixin: prometheusRules (recording rules), prometheusAlerts and
// grafanaDashboards, configured by _config (config.libsonnet).
(import 'config.libsonnet')
+ (import 'rules.libsonnet')
+ (import 'alerts.libsonnet')
+ (import 'dashboards.libsonnet')
