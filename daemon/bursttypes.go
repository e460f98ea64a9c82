package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/inferprobe/inferprobe/collector/gpu"
	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/servermetrics"
	"github.com/inferprobe/inferprobe/stats"
)

// Errors of the burst controls; the API maps each to its status code.
var (
	// ErrUnknownBurst: no burst of that name is configured (404).
	ErrUnknownBurst = errors.New("no burst of that name is configured")
	// ErrNotOnDemand: the burst exists but is not on_demand (403).
	ErrNotOnDemand = errors.New("burst is not on_demand; set on_demand: true in the scenario file to trigger it through the API")
	// ErrUnknownRun: no run of that id is running or kept in the history (404).
	ErrUnknownRun = errors.New("no run of that id")
	// ErrRunFinished: the run to cancel has already ended (409).
	ErrRunFinished = errors.New("run has already finished")
)

// BusyError says a target already has a burst running (409).
type BusyError struct {
	Target string
	RunID  string // the run in the way
}

func (e *BusyError) Error() string {
	return "target " + e.Target + " already has burst run " + e.RunID + " running; wait for it or cancel it"
}

// Run states.
const (
	RunQueued    = "queued"
	RunRunning   = "running"
	RunSucceeded = "succeeded" // ran to its end; requests may still have failed
	RunFailed    = "failed"    // could not run: bad override, target gone at reload
	RunCancelled = "cancelled"
)

// Run triggers.
const (
	TriggerSchedule = "schedule"
	TriggerAPI      = "api"
)

// BurstOverrides change one run of a burst; zero fields keep the configured
// value. Each is lowered to the burst's configured maximum, and the run's
// Adjusted says so.
type BurstOverrides struct {
	Duration    time.Duration
	Requests    uint64
	Rate        float64
	Concurrency int
}

// overridesJSON is BurstOverrides as JSON: the duration as text ("30s"),
// the form the API takes, so a run reads back as it was asked for.
type overridesJSON struct {
	Duration    string  `json:"duration,omitempty"`
	Requests    uint64  `json:"requests,omitempty"`
	Rate        float64 `json:"rate,omitempty"`
	Concurrency int     `json:"concurrency,omitempty"`
}

// MarshalJSON writes the duration as text.
func (o BurstOverrides) MarshalJSON() ([]byte, error) {
	j := overridesJSON{Requests: o.Requests, Rate: o.Rate, Concurrency: o.Concurrency}
	if o.Duration != 0 {
		j.Duration = o.Duration.String()
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (o *BurstOverrides) UnmarshalJSON(b []byte) error {
	var j overridesJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*o = BurstOverrides{Requests: j.Requests, Rate: j.Rate, Concurrency: j.Concurrency}
	if j.Duration != "" {
		d, err := time.ParseDuration(j.Duration)
		if err != nil {
			return fmt.Errorf("overrides duration: %w", err)
		}
		o.Duration = d
	}
	return nil
}

// Adjustment is an override a run used otherwise than asked: what was
// asked, what was used and why, in the API's units (a duration as text).
type Adjustment struct {
	Field string `json:"field"`
	Asked string `json:"asked"`
	Used  string `json:"used"`
	Why   string `json:"why"`
}

// BurstInfo describes one configured burst.
type BurstInfo struct {
	Name     string    `json:"name"`
	Target   string    `json:"target"`
	Schedule string    `json:"schedule,omitempty"` // cron expression or "every 6h"; empty when only on demand
	OnDemand bool      `json:"on_demand"`
	Next     time.Time `json:"next,omitzero"` // next scheduled start
	Running  string    `json:"running,omitempty"`
}

// RunInfo is one burst run: its state while it runs and its report once done.
// It is what the API returns and what the history keeps.
type RunInfo struct {
	ID        string         `json:"id"`
	Burst     string         `json:"burst"`
	Target    string         `json:"target"`
	Trigger   string         `json:"trigger"`
	State     string         `json:"state"`
	Error     string         `json:"error,omitempty"`
	Overrides BurstOverrides `json:"overrides,omitzero"`
	// Adjusted lists the overrides the run did not use as asked.
	Adjusted []Adjustment `json:"adjusted,omitempty"`
	Queued   time.Time    `json:"queued,omitzero"`
	Started  time.Time    `json:"started,omitzero"`
	Ended    time.Time    `json:"ended,omitzero"`
	// Cluster says how the run was shared between replicas; nil for a run
	// of this replica alone.
	Cluster *ClusterRun `json:"cluster,omitempty"`
	// Report is set once the run has ended (and, for progress, while it
	// runs); for a search, the step's at the answer.
	Report *BurstReport `json:"report,omitempty"`
	// Search is a search burst's result; nil for other runs.
	Search *SearchReport `json:"search,omitempty"`
}

// BurstReport is a run's result, computed from its raw samples.
type BurstReport struct {
	Summary report.Summary   `json:"summary"` // summary.good counts the requests that met every SLO
	GPU     *gpu.WindowStats `json:"gpu,omitempty"`
	Digest  string           `json:"sequence_digest"`
	// RunID is the run ID this replica's request IDs fold in (record.RunID);
	// each replica of a cluster run draws its own.
	RunID string `json:"run_id"`
	// ClientBound says why inferprobe itself may have been the bottleneck
	// (its CPU, its scheduling lag), so that the figures may describe the
	// client, not the server; empty when it kept up. For a cluster run,
	// this replica's verdict.
	ClientBound string `json:"client_bound,omitempty"`
	// GraceExpired says the grace period ended with requests still in
	// flight; GraceCut is how many there were, and were cut (this
	// replica's, for a cluster run).
	GraceExpired bool `json:"grace_expired,omitempty"`
	GraceCut     int  `json:"grace_cut_requests,omitempty"`
	// ServerMetrics is what the target's own metrics said over the run:
	// its queue, batch, KV cache and TTFT beside the client's; nil when it
	// serves none.
	ServerMetrics *servermetrics.Report `json:"server_metrics,omitempty"`
	// Regression is how the run compares with the earlier runs of its
	// burst and target; nil for a run not on this replica's gauges or
	// without an earlier run since the start.
	Regression *Regression `json:"regression,omitempty"`
	// samples are the run's raw samples, to judge it by, and requests its
	// requests, for its artifacts.
	samples  report.Samples
	requests []report.RequestRecord
}

// newBurstReport is the report of a run that measured rep: its summary
// carries the intervals bench's report carries at its default
// --confidence-level (every mean, percentile and throughput,
// docs/metrics.md#confidence-intervals), which the run's report.html
// draws as error bars.
func newBurstReport(rep *report.Report, digest, runID string, g *gpu.WindowStats) *BurstReport {
	return &BurstReport{Summary: rep.SummaryAt(stats.DefaultLevel), Digest: digest, RunID: runID, GPU: g, samples: rep.Samples(), requests: rep.Requests()}
}

// dropSamples lets the samples and requests go once the run is judged and its
// artifacts kept.
func (b *BurstReport) dropSamples() { b.samples, b.requests = report.Samples{}, nil }
