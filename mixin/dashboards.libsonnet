// The Grafana dashboards, as the dashboards/ Go generator writes them from this mixin's
// _config (see dashboards/README.md for why they are generated in Go): a consumer who overrides
// _config gets rules and alerts that follow it, and dashboards that follow it once regenerated
// with `go test ./dashboards/ -run TestFilesUpToDate -update`.
{
  grafanaDashboards+:: {
    'inferprobe-overview.json': import '../dashboards/overview.json',
    'inferprobe-latency.json': import '../dashboards/latency.json',
    'inferprobe-bursts.json': import '../dashboards/bursts.json',
    'inferprobe-gpu.json': import '../dashboards/gpu.json',
    'inferprobe-client.json': import '../dashboards/client.json',
  },
}
