package daemon

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/inferprobe/inferprobe/cluster"
	"github.com/inferprobe/inferprobe/collector"
	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/report"
)

// A search burst in a cluster is one cluster run: the replica that starts
// it coordinates the search, and each step is split across the replicas as
// a cluster run is. The coordinator sends every peer the step's
// concurrency and agreed start, runs its own share, gathers the peers'
// records of the step and judges the step on the merged records. The
// peers' shares of the run last the whole search; each runs the steps it
// is sent until the coordinator ends it.

// clusterStep is what the coordinator of a cluster search sends each peer:
// run your share of step Index at Concurrency from StartAt, or (End) the
// search is over.
type clusterStep struct {
	Index       int `json:"index"`
	Concurrency int `json:"concurrency,omitempty"`
	// Warmup is the step's smooth_isotonic warm-up (capacity.Step.Warmup),
	// which replaces the burst's warmup on every replica.
	Warmup  time.Duration `json:"warmup,omitempty"`
	StartAt time.Time     `json:"start_at,omitzero"`
	End     bool          `json:"end,omitempty"`
}

// stepIdle is how long a peer's share of a search waits for its next step
// before it ends failed: longer than the coordinator takes between two
// steps, a share fetch waiting at most maxWait.
const stepIdle = maxWait + reportTimeout + time.Minute

// searchShare is a peer's part of a cluster search: the steps the
// coordinator sends it, and the step it runs or ran last, whose records the
// coordinator gathers.
type searchShare struct {
	calls chan stepCall

	mu    sync.Mutex
	index int                // of step
	step  *stepShare         // nil before the first step
	stop  context.CancelFunc // stops step, and cuts its requests in flight
}

// stepCall is a step handed to the share's loop, which answers on reply
// once the step is planned (or the share ends).
type stepCall struct {
	step  clusterStep
	reply chan error
}

// stepShare is a peer's share of one step.
type stepShare struct {
	done  chan struct{} // closed once reply is set
	reply shareReply
}

func newSearchShare() *searchShare { return &searchShare{calls: make(chan stepCall)} }

// runSearchShare runs this replica's share r of a cluster search another
// replica coordinates: each step it is sent, until the coordinator ends
// the search, the run is cancelled, or no step comes for stepIdle.
func (m *burstManager) runSearchShare(r *burstRun, spec *burstSpec, target *prober.Target, newRun func(*finite.Plan) *finite.Run, ctx, reqCtx context.Context) {
	sh := r.searchShare
	r.mu.Lock()
	name, o := r.info.Burst, r.info.Overrides
	r.mu.Unlock()
	var last *finite.Result // the last step's own share
	idle := time.NewTimer(stepIdle)
	defer idle.Stop()
	for {
		var call stepCall
		select {
		case call = <-sh.calls:
		case <-ctx.Done(): // cancelled, or draining
			m.endSearchShare(r, last, ctx.Err())
			return
		case <-idle.C:
			m.endSearchShare(r, last, fmt.Errorf("the replica coordinating the search sent no step for %s", stepIdle))
			return
		}
		if call.step.End {
			call.reply <- nil
			m.endSearchShare(r, last, nil)
			return
		}
		at := stepSpec(spec, call.step)
		p, _, err := planRun(name, at, target, o, m.d.shard, call.step.StartAt)
		if err != nil {
			call.reply <- err // the coordinator ends the search, and then this share
			continue
		}
		// A step the search no longer needs (cut by its time limit, or left
		// by its error) is stopped whole: it is not judged.
		stepCtx, stopSending := context.WithCancel(ctx)
		stepReqCtx, cut := context.WithCancel(reqCtx)
		stop := func() { stopSending(); cut() }
		st := &stepShare{done: make(chan struct{})}
		sh.mu.Lock()
		sh.index, sh.step, sh.stop = call.step.Index, st, stop
		sh.mu.Unlock()
		run := newRun(p)
		r.mu.Lock()
		r.run = run
		r.mu.Unlock()
		call.reply <- nil
		out := run.Execute(stepCtx, stepReqCtx)
		recs, err := r.records.take()
		st.reply = shareReply{Shard: m.shardOf().Index, State: RunSucceeded, Records: recs}
		switch {
		case ctx.Err() != nil:
			st.reply.State, st.reply.Error = RunCancelled, "this replica's share was cancelled, or it shut down"
		case stepCtx.Err() != nil:
			st.reply.State, st.reply.Error = RunCancelled, "the search ended during the step"
		case err != nil:
			st.reply.State, st.reply.Error = RunFailed, "some records did not encode: "+err.Error()
		}
		stop()
		close(st.done)
		last = &out
		idle.Reset(stepIdle)
	}
}

// endSearchShare ends a peer's share of a search, whose last step's own
// share is last (nil before any step), for err (nil: the coordinator ended
// it). A share that ran steps and ended normally or was cancelled keeps its
// last step's report until the coordinator hands it the search's.
func (m *burstManager) endSearchShare(r *burstRun, last *finite.Result, err error) {
	r.mu.Lock()
	cancelled := r.cancelled
	r.mu.Unlock()
	switch {
	case last != nil && (err == nil || cancelled):
		m.finish(r, *last, nil)
	case err == nil:
		m.endUnmeasured(r, errors.New("the search ended before its first step"))
	default:
		m.endUnmeasured(r, err)
	}
}

// stepShare hands step s of cluster search id to this replica's share: it
// returns once the share has planned the step, or for End once the share
// has ended, so that the coordinator's report replaces the share's.
func (m *burstManager) stepShare(ctx context.Context, id string, s clusterStep) error {
	r := m.share(id)
	if r == nil {
		return ErrUnknownRun
	}
	sh := r.searchShare
	switch {
	case sh == nil:
		return fmt.Errorf("%w: run %s is not a share of a search", errCluster, id)
	case s.End:
		sh.mu.Lock()
		if sh.stop != nil {
			sh.stop() // a step cut by the search's time limit, or left by its error
		}
		sh.mu.Unlock()
	case !m.clock.Now().Before(s.StartAt):
		return fmt.Errorf("%w: the step call came after the step's agreed start %s; raise --cluster.start-lead or check the replicas' clocks", errCluster, s.StartAt.Format(time.RFC3339Nano))
	}
	call := stepCall{step: s, reply: make(chan error, 1)}
	select {
	case sh.calls <- call:
	case <-r.done:
		return ErrRunFinished
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := <-call.reply; err != nil || !s.End {
		return err
	}
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stepShareOf answers the coordinator's fetch of step's records from r, a
// share of a search, once the step has ended or wait has passed.
func (m *burstManager) stepShareOf(ctx context.Context, r *burstRun, step int, wait time.Duration) (shareReply, error) {
	sh := r.searchShare
	if sh == nil {
		return shareReply{}, fmt.Errorf("%w: run %s is not a share of a search", errCluster, r.id())
	}
	sh.mu.Lock()
	st, index := sh.step, sh.index
	sh.mu.Unlock()
	if st == nil || index != step {
		return shareReply{}, fmt.Errorf("%w: this replica's share of run %s is not at step %d", errCluster, r.id(), step)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-st.done:
		return st.reply, nil
	case <-t.C:
		return shareReply{Shard: m.shardOf().Index, State: RunRunning}, nil
	case <-ctx.Done():
		return shareReply{}, ctx.Err()
	}
}

// searchPeers is what a cluster search's coordinator checks before its
// first step: every shard took its share. It returns the peers that took
// theirs, which the search ends whatever the check says.
func (m *burstManager) searchPeers(r *burstRun) ([]clusterPeer, error) {
	<-r.peersStarted
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.problems) > 0 {
		return r.peers, fmt.Errorf("%w: a search needs every replica, each step's concurrency being split across them all: %s", errCluster, describeProblems(r.problems))
	}
	return r.peers, nil
}

// startStep sends step s to every peer while this replica plans its own
// share of it with plan; a peer that does not take it is a problem of the
// run, and fails the step.
func (m *burstManager) startStep(r *burstRun, peers []clusterPeer, s clusterStep, plan func() (*finite.Plan, error)) (*finite.Plan, error) {
	errs := make([]error, len(peers))
	var wg sync.WaitGroup
	for i, p := range peers {
		wg.Go(func() {
			errs[i] = m.cluster.opts.Client.Do(context.Background(), p.Addr, http.MethodPut, clusterPath+"/runs/"+url.PathEscape(r.id())+"/step", m.cluster.opts.Lead, s, nil)
			m.cluster.metrics.Called(p.Addr, collector.ClusterCallStep, errs[i])
		})
	}
	p, err := plan()
	wg.Wait()
	var problems []ShardProblem
	for i, peer := range peers {
		if errs[i] != nil {
			problems = append(problems, ShardProblem{Shard: peer.Shard, Peer: peer.Addr, Error: fmt.Sprintf("did not start step %d: %v", s.Index, errs[i])})
		}
	}
	if len(problems) > 0 {
		return nil, m.stepProblems(r, s, problems)
	}
	return p, err
}

// gatherStep merges this replica's share of step s, which ended as out,
// with every peer's: the step's result, judged as a whole. A shard missing
// or not whole fails the step, whose load was then not the concurrency asked.
func (m *burstManager) gatherStep(r *burstRun, peers []clusterPeer, s clusterStep, p *finite.Plan, out finite.Result) (finite.Result, error) {
	r.mu.Lock()
	shards := r.info.Cluster.Shards
	r.mu.Unlock()
	own, err := r.records.take()
	if err != nil {
		return out, m.stepProblems(r, s, []ShardProblem{{Shard: m.shardOf().Index, Error: "some of this replica's records did not encode: " + err.Error()}})
	}
	wait := gatherSlack + p.InFlightBound(time.Duration(r.target.Spec.Timeout))
	shares, problems := m.gatherShares(r.id(), peers, shards, s.Index, wait, RunSucceeded, own)
	if len(problems) > 0 {
		return out, m.stepProblems(r, s, problems)
	}
	merged, err := report.Merge(shards, shares, report.WithSLO(report.NewSLO(r.spec.burst.Probe().SLO)))
	if err != nil {
		return out, m.stepProblems(r, s, []ShardProblem{{Shard: -1, Error: "the shards' records do not merge into one step: " + err.Error()}})
	}
	out.Summary, out.Report, out.Digest = merged.Report.Summary(), merged.Report, merged.Digest
	return out, nil
}

// stepProblems keeps the problems that failed step s on r, where the run's
// cluster part shows them, and is the step's error.
func (m *burstManager) stepProblems(r *burstRun, s clusterStep, problems []ShardProblem) error {
	r.mu.Lock()
	r.problems = append(r.problems, problems...)
	r.mu.Unlock()
	return fmt.Errorf("the step at concurrency %d is not whole, so it is not judged: %s", s.Concurrency, describeProblems(problems))
}

func describeProblems(problems []ShardProblem) string {
	var s []string
	for _, p := range problems {
		s = append(s, fmt.Sprintf("shard %d: %s", p.Shard, p.Error))
	}
	return strings.Join(s, "; ")
}

// endSteps ends every peer's share of search r, once the search is over:
// each then ends with its last step's share, which the coordinator's
// report replaces.
func (m *burstManager) endSteps(r *burstRun, peers []clusterPeer) {
	var wg sync.WaitGroup
	for _, p := range peers {
		wg.Go(func() {
			err := m.cluster.opts.Client.Do(context.Background(), p.Addr, http.MethodPut, clusterPath+"/runs/"+url.PathEscape(r.id())+"/step", reportTimeout, clusterStep{End: true}, nil)
			var se *cluster.StatusError
			if errors.As(err, &se) && (se.Status == http.StatusNotFound || se.Status == http.StatusConflict) {
				err = nil // a share that has ended already: cancelled, or it failed
			}
			m.cluster.metrics.Called(p.Addr, collector.ClusterCallStep, err)
			if err != nil {
				m.d.logger.Warn("cannot end a peer's share of the search; it ends once it has waited for a step long enough", "run", r.id(), "peer", p.Addr, "err", err)
			}
		})
	}
	wg.Wait()
}

// searchCluster is the cluster part of a search r that ended: each step
// was gathered as it ended, and the problems that ended the search early
// are its missing shards.
func (m *burstManager) searchCluster(r *burstRun) *ClusterRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	cr := *r.info.Cluster
	problems := slices.Clone(r.problems)
	slices.SortFunc(problems, func(a, b ShardProblem) int { return a.Shard - b.Shard })
	cr.Merged, cr.Partial, cr.Missing = true, len(problems) > 0, problems
	return &cr
}
