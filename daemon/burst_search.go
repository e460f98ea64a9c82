package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/inferprobe/inferprobe/capacity"
	"github.com/inferprobe/inferprobe/collector"
	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/report/export"
	"github.com/inferprobe/inferprobe/scenarios"
)

// SearchReport is a capacity search's result: its answer, how sure it is
// (the first infeasible concurrency) and every step, as bench's
// search_history.json has them.
type SearchReport struct {
	Recipe string `json:"recipe"`
	Style  string `json:"style"`
	// SLA is the filters every step was judged by, AIPerf's
	// metric_tag:stat:op:threshold joined by " and ".
	SLA string `json:"sla"`
	// Capacity is the answer: the highest concurrency that met the SLA
	// below the first that did not; 0 when none met it.
	Capacity int `json:"capacity"`
	// FirstInfeasible is the lowest concurrency that broke the SLA; 0 when
	// every step met it.
	FirstInfeasible int `json:"first_infeasible,omitempty"`
	// Answer is the answer in a sentence, as bench prints it.
	Answer string       `json:"answer"`
	Reason string       `json:"convergence_reason"`
	Steps  []SearchStep `json:"steps"`
}

// SearchStep is one step of a search.
type SearchStep struct {
	Concurrency           int               `json:"concurrency"`
	Feasible              bool              `json:"feasible"`
	RequestThroughput     float64           `json:"request_throughput"`
	OutputTokenThroughput float64           `json:"output_token_throughput"`
	Breaches              []capacity.Breach `json:"breaches,omitempty"`
}

// errSearchSharded refuses a search on a replica of a sharded deployment
// that does not run its bursts as cluster runs.
var errSearchSharded = errors.New("a search burst's steps depend on each other's results, so on a sharded daemon it runs as a cluster run only: give the replicas --cluster.peers, or run it on a daemon without --shard")

// search runs r as a capacity search: each step a run of the burst's
// requests (or duration, as overridden) at one concurrency of its closed
// loop, newRun making each step's run. The run's report is the step's at the answer (else the
// last step's). In a cluster, this replica coordinates the search, and
// each step is split across the replicas (cluster_search.go).
func (m *burstManager) search(r *burstRun, spec *burstSpec, target *prober.Target, newRun func(*finite.Plan) *finite.Run, ctx, reqCtx context.Context) {
	s := spec.burst.Search
	r.mu.Lock()
	name, o, clustered := r.info.Burst, r.info.Overrides, r.info.Cluster != nil
	r.mu.Unlock()
	var peers []clusterPeer
	var peersErr error
	if clustered {
		peers, peersErr = m.searchPeers(r)
	}
	plan, err := capacity.NewPlan(s.Settings(spec.target.Streaming()))
	switch {
	case err != nil:
	case m.d.shard.Count > 1 && !clustered:
		err = errSearchSharded
	case o.Concurrency > 0 || o.Rate > 0:
		err = errors.New("burst " + name + " is a search, which sets the concurrency of each step: override duration or requests instead")
	case peersErr != nil:
		err = peersErr
	case plan.Min < m.shardOf().Count:
		err = fmt.Errorf("a search across %d replicas splits each step's concurrency across them: set search.concurrency_min to at least %d (it is %d)", m.shardOf().Count, m.shardOf().Count, plan.Min)
	}
	// The peers' shares end once the search has, before this replica's
	// report replaces theirs.
	endPeers := func() {
		if clustered {
			m.endSteps(r, peers)
		}
	}
	if err != nil {
		endPeers()
		m.endUnmeasured(r, err)
		return
	}
	var deadline time.Time
	if s.TimeLimit > 0 {
		deadline = m.clock.Now().Add(time.Duration(s.TimeLimit))
	}
	results := map[int]finite.Result{}
	res, err := plan.Run(ctx, deadline, func(ctx context.Context, step capacity.Step) (capacity.Metrics, error) {
		cs := clusterStep{Index: step.Index, Concurrency: step.Concurrency, Warmup: step.Warmup}
		at := stepSpec(spec, cs)
		planStep := func() (*finite.Plan, error) {
			p, _, err := planRun(name, at, target, o, m.d.shard, cs.StartAt)
			return p, err
		}
		var p *finite.Plan
		var err error
		if clustered {
			cs.StartAt = m.clock.Now().Add(m.cluster.opts.Lead).UTC()
			p, err = m.startStep(r, peers, cs, planStep)
		} else {
			p, err = planStep()
		}
		if err != nil {
			return nil, err
		}
		run := newRun(p)
		r.mu.Lock()
		r.run = run
		r.mu.Unlock()
		stepCtx := ctx
		if !deadline.IsZero() {
			var cancel context.CancelFunc
			stepCtx, cancel = context.WithDeadline(ctx, deadline)
			defer cancel()
		}
		out := run.Execute(stepCtx, reqCtx)
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err() // cancelled or draining
		case stepCtx.Err() != nil:
			return nil, capacity.ErrTimeLimit
		}
		if clustered {
			// Judged on every replica's records of the step, merged.
			if out, err = m.gatherStep(r, peers, cs, p, out); err != nil {
				return nil, err
			}
		}
		results[step.Index] = out
		return export.Run{Summary: out.Summary, SLO: p.SLO}.Metrics(), nil
	})
	endPeers()
	if err != nil && len(res.Steps) > 0 {
		m.d.logger.Warn("burst search ended early", "burst", name, "steps", len(res.Steps), "err", err)
	}
	if len(res.Steps) == 0 {
		if err == nil {
			err = errors.New("the search ended before a step finished (" + res.Reason + ")")
		}
		m.endUnmeasured(r, err)
		return
	}
	at := res.Steps[len(res.Steps)-1].Index
	if res.FeasibleMax != nil {
		at = res.FeasibleMax.Step
	}
	m.finish(r, results[at], searchReport(res, results))
}

// stepSpec is the burst as search step cs runs it: at the step's
// concurrency, with its warm-up in place of the burst's when it has one.
func stepSpec(spec *burstSpec, cs clusterStep) *burstSpec {
	at := *spec
	at.burst.Arrival.Concurrency = cs.Concurrency
	if cs.Warmup > 0 {
		at.burst.Warmup = scenarios.Warmup{Duration: scenarios.Duration(cs.Warmup)}
	}
	return &at
}

func searchReport(res *capacity.Result, results map[int]finite.Result) *SearchReport {
	p := res.Plan
	var sla []string
	for _, f := range p.Filters {
		sla = append(sla, f.String())
	}
	out := &SearchReport{Recipe: p.Recipe, Style: p.Style, SLA: strings.Join(sla, " and "), Answer: export.Answer(res), Reason: res.Reason}
	if res.FeasibleMax != nil {
		out.Capacity = res.FeasibleMax.Concurrency
	}
	if res.InfeasibleMin != nil {
		out.FirstInfeasible = res.InfeasibleMin.Concurrency
	}
	for _, st := range res.Steps {
		sum := results[st.Index].Summary
		out.Steps = append(out.Steps, SearchStep{Concurrency: st.Concurrency, Feasible: st.Feasible,
			RequestThroughput: sum.RequestThroughput, OutputTokenThroughput: sum.OutputTokenThroughput, Breaches: st.Breaches})
	}
	return out
}

// gauges is what the capacity gauges show of the search.
func (s *SearchReport) gauges(end float64) collector.CapacityResult {
	c := collector.CapacityResult{Recipe: s.Recipe, SLA: s.SLA, Concurrency: s.Capacity, End: end}
	for _, st := range s.Steps {
		if st.Concurrency == s.Capacity && st.Feasible {
			c.RequestThroughput, c.OutputTokenThroughput = st.RequestThroughput, st.OutputTokenThroughput
		}
	}
	return c
}

// endUnmeasured ends r, a search that measured nothing: cancelled when it
// was cancelled, else failed with err.
func (m *burstManager) endUnmeasured(r *burstRun, err error) {
	r.mu.Lock()
	r.ended = true
	final := r.info
	final.State, final.Ended = RunCancelled, m.clock.Now()
	if !r.cancelled {
		final.State, final.Error = RunFailed, err.Error()
		m.d.logger.Error("burst search failed", "burst", final.Burst, "run", final.ID, "err", err)
	}
	r.mu.Unlock()
	m.metrics.Running(final.Burst, final.Target, false)
	m.end(r, final)
}

// capacityRows are the search bursts and each one's last answer, by name,
// for the landing page.
func (m *burstManager) capacityRows() []capacityRow {
	m.mu.Lock()
	var rows []capacityRow
	for _, name := range sortedKeys(m.bursts) {
		if e := m.bursts[name]; e.spec.burst.Search != nil {
			rows = append(rows, capacityRow{Burst: name, Target: e.spec.burst.Target})
		}
	}
	m.mu.Unlock()
	for i, row := range rows {
		if r, ok := m.history.lastSucceeded(row.Burst, m.onGauges); ok && r.Search != nil && r.Target == row.Target {
			rows[i].Answer, rows[i].Ended = r.Search.Answer, r.Ended
		}
	}
	return rows
}
