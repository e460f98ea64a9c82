package daemon

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/inferprobe/inferprobe/cluster"
	"github.com/inferprobe/inferprobe/collector"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/scenarios"
)

// ClusterOptions make the replicas of a sharded deployment (--shard i/n)
// run every burst together: the replica that starts a run (the API call's,
// or for a schedule the lowest shard that answers) starts it on every peer
// at one agreed instant, gathers their records and serves one report.
type ClusterOptions struct {
	Peers  cluster.Peers
	Client *cluster.Client
	// Lead is how far ahead of the trigger the agreed start lies: time for
	// every replica to hear of the run and plan it, so none starts late.
	Lead     time.Duration
	Resolver cluster.Resolver // nil: the system's
}

// WithCluster runs bursts across the replicas o.Peers finds.
func WithCluster(o ClusterOptions) Option {
	return func(d *Daemon) {
		if o.Resolver == nil {
			o.Resolver = net.DefaultResolver
		}
		var b [8]byte
		_, _ = rand.Read(b[:])
		d.bursts.cluster = &clusterState{opts: o, instance: hex.EncodeToString(b[:]), metrics: collector.NewCluster(d.registry)}
	}
}

// Timeouts of the calls between replicas.
const (
	infoTimeout   = 2 * time.Second
	reportTimeout = 10 * time.Second
	// gatherSlack is how long past its own end the gathering replica waits
	// for a peer's share (on top of the burst's grace period): the shares
	// start together and send equal parts, so they end close together.
	gatherSlack = 30 * time.Second
	// keptShares bounds the ended shares whose records a gatherer may still
	// fetch.
	keptShares = 8
)

// errCluster marks a run that cannot start because the cluster is not in
// the shape --shard says (503).
var errCluster = errors.New("cluster")

// clusterState is a replica's part of the cluster.
type clusterState struct {
	opts     ClusterOptions
	instance string // tells this process from its peers when the peer list names it too
	metrics  *collector.Cluster

	mu   sync.Mutex
	kept []*burstRun // ended shares, newest last
	last ClusterStatus
}

// ClusterStatus is what the last look at the peers found, on /api/v1/status.
type ClusterStatus struct {
	Peers   string    `json:"peers"` // --cluster.peers
	Shard   string    `json:"shard"`
	Checked time.Time `json:"checked,omitzero"` // when the peers were last asked; zero before the first run
	// Found are the peers that answered; Missing the shards none answered
	// for; Error why a run could not start at all (a peer disagrees with --shard).
	Found   []clusterPeer  `json:"found,omitempty"`
	Missing []ShardProblem `json:"missing,omitempty"`
	Error   string         `json:"error,omitempty"`
}

// clusterStatus is the status's cluster part, nil without a cluster.
func (m *burstManager) clusterStatus() *ClusterStatus {
	c := m.cluster
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.last
	s.Peers, s.Shard = c.opts.Peers.String(), m.shardOf().String()
	return &s
}

// ClusterRun says how a run was shared between replicas; RunInfo.Cluster.
type ClusterRun struct {
	Shards int `json:"shards"`
	// Gatherer is the shard of the replica that gathers the report.
	Gatherer int       `json:"gatherer"`
	StartAt  time.Time `json:"start_at"`
	// Merged says the report is the whole run's, gathered from every
	// shard; false for a replica's own share, until the gatherer hands it
	// the whole report.
	Merged bool `json:"merged"`
	// Partial says some shard's records are missing or incomplete (Missing
	// says which and why): the report covers less than the run.
	Partial bool           `json:"partial,omitempty"`
	Missing []ShardProblem `json:"missing,omitempty"`
}

// ShardProblem is a shard missing from a cluster run's report, or there
// only in part.
type ShardProblem struct {
	Shard int    `json:"shard"`          // -1 when the peer never said which it is
	Peer  string `json:"peer,omitempty"` // its address, when known
	Error string `json:"error"`
}

// clusterPeer is a peer replica taking part in a run.
type clusterPeer struct {
	Addr  string `json:"addr"`
	Shard int    `json:"shard"`
}

// peerInfo is a replica's answer to the info call.
type peerInfo struct {
	Instance string `json:"instance"`
	Shard    int    `json:"shard"`
	Shards   int    `json:"shards"`
}

// clusterStart asks a peer to run its share of run id.
type clusterStart struct {
	Burst     string         `json:"burst"`
	Trigger   string         `json:"trigger"`
	Overrides BurstOverrides `json:"overrides"`
	Spec      string         `json:"spec"` // specHash of the burst, which must be the same everywhere
	Cluster   ClusterRun     `json:"cluster"`
}

// shareReply is a peer's share of a run: its exact records, each in the
// one encoding of a record between processes (record.Marshal).
type shareReply struct {
	Shard   int               `json:"shard"`
	State   string            `json:"state"`
	Error   string            `json:"error,omitempty"`
	Records []json.RawMessage `json:"records"`
}

const clusterPath = "/api/v1/cluster"

// shardOf is this replica's shard, the whole sequence counting as 0/1.
func (m *burstManager) shardOf() record.Shard {
	s := m.d.shard
	if s.Count < 1 {
		s = record.Shard{Index: 0, Count: 1}
	}
	return s
}

// onGauges says whether run goes on this replica's last-run gauges: a run
// of its own, or a cluster run it gathered. A share of a cluster run is a
// fraction of it, and another replica's gathered run is that one's to show.
func (m *burstManager) onGauges(run RunInfo) bool {
	return run.Cluster == nil || run.Cluster.Gatherer == m.shardOf().Index
}

// specHash identifies what a burst's runs are planned from, so that a peer
// with another scenario file refuses to run a share of a different burst.
func specHash(s *burstSpec) string {
	b, _ := json.Marshal(struct {
		Seed   uint64
		Burst  scenarios.Burst
		Target scenarios.Target
	}{s.seed, s.burst, s.target})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// discover asks every replica the peer list names for its shard. It fails
// when the replicas disagree with --shard (another count, a shard claimed
// twice); shards no replica answered for, and peers that did not answer,
// are returned as problems: the run goes ahead without them, partial.
func (m *burstManager) discover(ctx context.Context) ([]clusterPeer, []ShardProblem, error) {
	peers, problems, err := m.askPeers(ctx)
	c := m.cluster
	c.mu.Lock()
	c.last = ClusterStatus{Checked: m.clock.Now(), Found: peers, Missing: problems}
	if err != nil {
		c.last.Error = err.Error()
	}
	c.mu.Unlock()
	return peers, problems, err
}

// askPeers is discover's look at the peers.
func (m *burstManager) askPeers(ctx context.Context) ([]clusterPeer, []ShardProblem, error) {
	c, own := m.cluster, m.shardOf()
	addrs, err := c.opts.Peers.Resolve(ctx, c.opts.Resolver)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errCluster, err)
	}
	infos := make([]peerInfo, len(addrs))
	errs := make([]error, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Go(func() {
			errs[i] = c.opts.Client.Do(ctx, addr, http.MethodGet, clusterPath+"/info", infoTimeout, nil, &infos[i])
			c.metrics.Called(addr, collector.ClusterCallInfo, errs[i])
		})
	}
	wg.Wait()
	var peers []clusterPeer
	var unanswered, why []string
	found := map[int]string{}
	sawSelf := false
	for i, addr := range addrs {
		info := infos[i]
		switch {
		case errs[i] != nil:
			unanswered, why = append(unanswered, addr), append(why, errs[i].Error())
			continue
		case info.Instance == c.instance:
			sawSelf = true
			continue
		case info.Shards != own.Count:
			return nil, nil, fmt.Errorf("%w: replica %s runs as shard %d/%d but this one as %s; give every replica the same --shard count, the number of replicas", errCluster, addr, info.Shard, info.Shards, own)
		case info.Shard == own.Index:
			return nil, nil, fmt.Errorf("%w: replica %s runs as shard %d/%d, as this one does; give each replica its own --shard index (in a StatefulSet, the pod's ordinal)", errCluster, addr, info.Shard, info.Shards)
		case found[info.Shard] != "":
			return nil, nil, fmt.Errorf("%w: replicas %s and %s both run as shard %d/%d; give each replica its own --shard index", errCluster, found[info.Shard], addr, info.Shard, info.Shards)
		}
		found[info.Shard] = addr
		peers = append(peers, clusterPeer{Addr: addr, Shard: info.Shard})
	}
	if !sawSelf && c.opts.Peers.Static() && len(unanswered) == 0 {
		return nil, nil, fmt.Errorf("%w: --cluster.peers does not list this replica (shard %s); list every replica, this one included", errCluster, own)
	}
	// A peer that does not answer cannot say which shard it is: each shard
	// no one answered for names the peers that did not answer. Peers that
	// did not answer while every shard did (a stale DNS record) only count
	// on inferprobe_cluster_peer_up.
	var problems []ShardProblem
	for s := range own.Count {
		if s != own.Index && found[s] == "" {
			msg := "no replica answered as this shard"
			if len(why) > 0 {
				msg += "; did not answer: " + strings.Join(why, "; ")
			}
			problems = append(problems, ShardProblem{Shard: s, Peer: strings.Join(unanswered, ","), Error: msg})
		}
	}
	return peers, problems, nil
}

// triggerCluster starts burst name on every replica at one agreed start,
// this one gathering; it checks what TriggerBurst checks.
func (m *burstManager) triggerCluster(name, trigger string, o BurstOverrides) (RunInfo, error) {
	m.mu.Lock()
	_, err := m.triggerable(name, trigger)
	m.mu.Unlock()
	if err != nil {
		return RunInfo{}, err
	}
	ctx := context.Background()
	peers, problems, err := m.discover(ctx)
	if err != nil {
		return RunInfo{}, err
	}
	m.mu.Lock()
	e, err := m.triggerable(name, trigger) // again: discovery took time
	if err != nil {
		m.mu.Unlock()
		return RunInfo{}, err
	}
	own := m.shardOf()
	r := m.newRun(e, trigger, o)
	cr := ClusterRun{Shards: own.Count, Gatherer: own.Index, StartAt: m.clock.Now().Add(m.cluster.opts.Lead).UTC()}
	r.info.Cluster = &cr
	r.peers, r.problems, r.peersStarted = peers, problems, make(chan struct{})
	m.start(r)
	start := clusterStart{Burst: name, Trigger: trigger, Overrides: o, Spec: specHash(&e.spec), Cluster: cr}
	m.mu.Unlock()

	planned := make(chan struct{})
	go func() { m.launchOne(r); close(planned) }()
	errs := make([]error, len(peers))
	var wg sync.WaitGroup
	for i, p := range peers {
		wg.Go(func() {
			errs[i] = m.cluster.opts.Client.Do(ctx, p.Addr, http.MethodPut, clusterPath+"/runs/"+url.PathEscape(r.info.ID), m.cluster.opts.Lead, start, nil)
			m.cluster.metrics.Called(p.Addr, collector.ClusterCallStart, errs[i])
		})
	}
	wg.Wait()
	r.mu.Lock()
	r.peers = nil
	for i, p := range peers {
		if errs[i] != nil {
			r.problems = append(r.problems, ShardProblem{Shard: p.Shard, Peer: p.Addr, Error: "did not start: " + errs[i].Error()})
			continue
		}
		r.peers = append(r.peers, p)
	}
	r.mu.Unlock()
	close(r.peersStarted)
	<-planned
	m.d.logger.Info("cluster burst run started", "burst", name, "run", r.id(), "start_at", cr.StartAt, "peers", len(r.peers), "problems", len(problems))
	return r.snapshot(), nil
}

// startShare runs this replica's share of a run another replica started.
func (m *burstManager) startShare(id string, s clusterStart) error {
	m.mu.Lock()
	e := m.bursts[s.Burst]
	switch {
	case m.closed:
		m.mu.Unlock()
		return errShuttingDown
	case e == nil:
		m.mu.Unlock()
		return ErrUnknownBurst
	case specHash(&e.spec) != s.Spec:
		m.mu.Unlock()
		return fmt.Errorf("%w: burst %s is configured differently on this replica than on the one that started the run; give every replica the same scenario file", errCluster, s.Burst)
	case s.Cluster.Shards != m.shardOf().Count:
		m.mu.Unlock()
		return fmt.Errorf("%w: the run is split %d ways but this replica is shard %s; give every replica the same --shard count", errCluster, s.Cluster.Shards, m.shardOf())
	case !m.clock.Now().Before(s.Cluster.StartAt):
		m.mu.Unlock()
		return fmt.Errorf("%w: the start call came after the agreed start %s; raise --cluster.start-lead or check the replicas' clocks", errCluster, s.Cluster.StartAt.Format(time.RFC3339Nano))
	}
	if r := m.busy[e.spec.burst.Target]; r != nil {
		m.mu.Unlock()
		return &BusyError{Target: e.spec.burst.Target, RunID: r.info.ID}
	}
	r := m.newRun(e, s.Trigger, s.Overrides)
	r.info.ID = id
	if e.spec.burst.Search != nil {
		r.searchShare = newSearchShare()
	}
	cr := s.Cluster
	r.info.Cluster = &cr
	m.start(r)
	m.mu.Unlock()
	m.launchOne(r)
	if info := r.snapshot(); info.State == RunFailed {
		return errors.New(info.Error)
	}
	return nil
}

// lowerShardAnswers reports whether a replica of a lower shard than this
// one answers: that one gathers a scheduled run, and this one only takes
// its share when asked.
func (m *burstManager) lowerShardAnswers(ctx context.Context) (int, bool) {
	peers, _, err := m.discover(ctx)
	if err != nil {
		return 0, false
	}
	own := m.shardOf().Index
	for _, p := range peers {
		if p.Shard < own {
			return p.Shard, true
		}
	}
	return 0, false
}

// scheduleCluster handles a scheduled start of burst name in a cluster: the
// lowest shard that answers starts and gathers it for all replicas.
func (m *burstManager) scheduleCluster(name string) {
	if lower, ok := m.lowerShardAnswers(context.Background()); ok {
		m.d.logger.Debug("scheduled burst left to a lower shard, which gathers it", "burst", name, "gatherer", lower)
		return
	}
	_, err := m.triggerCluster(name, TriggerSchedule, BurstOverrides{})
	var busy *BusyError
	switch {
	case errors.As(err, &busy):
		m.mu.Lock()
		target := ""
		if e := m.bursts[name]; e != nil {
			target = e.spec.burst.Target
		}
		m.mu.Unlock()
		m.metrics.Skipped(name, target)
		m.d.logger.Warn("scheduled burst skipped: its target is busy", "burst", name, "busy_with", busy.RunID)
	case err != nil:
		m.d.logger.Error("scheduled cluster burst could not start", "burst", name, "err", err)
	}
}

// shareRecords keeps the records of a share, encoded, for the gatherer.
type shareRecords struct {
	mu      sync.Mutex
	encoded []json.RawMessage
	err     error // the first record that did not encode
}

func (s *shareRecords) Started() {}

func (s *shareRecords) Observe(rec *record.Record) {
	b, err := record.Marshal(rec)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.err = cmp.Or(s.err, err)
		return
	}
	s.encoded = append(s.encoded, b)
}

func (s *shareRecords) all() ([]json.RawMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.encoded), s.err
}

// take is the records kept so far, which it clears: a search step's, once
// the step has ended, so that the next step starts with none.
func (s *shareRecords) take() ([]json.RawMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, err := s.encoded, s.err
	s.encoded, s.err = nil, nil
	return out, err
}

// decoded is a share's records, decoded.
func decoded(encoded []json.RawMessage) iter.Seq2[*record.Record, error] {
	return func(yield func(*record.Record, error) bool) {
		for _, b := range encoded {
			if !yield(record.Unmarshal(b)) {
				return
			}
		}
	}
}

// gather fetches every peer's share of r, which has ended here in state,
// and merges them with this replica's into the run's report.
func (m *burstManager) gather(r *burstRun, state string, ownReport *BurstReport) (*BurstReport, *ClusterRun) {
	<-r.peersStarted // a run too short to outlast the start calls still gathers from the peers that started
	r.mu.Lock()
	peers, problems, cr, run := r.peers, slices.Clone(r.problems), *r.info.Cluster, r.run
	r.mu.Unlock()
	// A peer's share ends at most the run's in-flight bound after its last
	// send: its grace period or, for a request-count run, the request timeout.
	inFlight := time.Duration(r.spec.burst.GracePeriod)
	if run != nil {
		inFlight = run.Plan().InFlightBound(time.Duration(r.target.Spec.Timeout))
	}
	own, err := r.records.all()
	if err != nil {
		problems = append(problems, ShardProblem{Shard: m.shardOf().Index, Error: "some of this replica's records did not encode: " + err.Error()})
	}
	shares, more := m.gatherShares(r.info.ID, peers, cr.Shards, -1, gatherSlack+inFlight, state, own)
	problems = append(problems, more...)
	out := ownReport
	merged, err := report.Merge(cr.Shards, shares, report.WithSLO(report.NewSLO(r.spec.burst.Probe().SLO)))
	if err != nil {
		// Then this replica's own share is all the report can show.
		problems = append(problems, ShardProblem{Shard: -1, Error: "the shards' records do not merge into one run, so the report is this replica's share only: " + err.Error()})
	} else {
		out = newBurstReport(merged.Report, merged.Digest.String(), ownReport.RunID, ownReport.GPU)
	}
	slices.SortFunc(problems, func(a, b ShardProblem) int { return a.Shard - b.Shard })
	cr.Merged, cr.Partial, cr.Missing = true, len(problems) > 0, problems
	if cr.Partial {
		m.d.logger.Warn("cluster burst run is partial: some shards are missing from its report", "burst", r.info.Burst, "run", r.info.ID, "missing", problems)
	}
	return out, &cr
}

// gatherShares fetches every peer's share of run id (of its search step
// step; -1: of the whole run), waiting up to wait for each to end, and
// returns them after this replica's own records, which ended here in
// state, with the problems of the peers whose share is missing or not
// whole.
func (m *burstManager) gatherShares(id string, peers []clusterPeer, shards, step int, wait time.Duration, state string, own []json.RawMessage) ([]report.ShardRecords, []ShardProblem) {
	// A drain's end cuts the wait as it cuts requests in flight: a replica
	// shutting down (Kubernetes allows it 30 s by default) must not wait the
	// whole slack for a peer's share.
	ctx := m.d.reqCtx
	path := clusterPath + "/runs/" + url.PathEscape(id) + "/share?wait=" + wait.String()
	if step >= 0 {
		path += "&step=" + strconv.Itoa(step)
	}
	replies := make([]shareReply, len(peers))
	errs := make([]error, len(peers))
	var wg sync.WaitGroup
	for i, p := range peers {
		wg.Go(func() {
			errs[i] = m.cluster.opts.Client.Do(ctx, p.Addr, http.MethodGet, path, wait+reportTimeout, nil, &replies[i])
			m.cluster.metrics.Called(p.Addr, collector.ClusterCallShare, errs[i])
		})
	}
	wg.Wait()
	var problems []ShardProblem
	shares := []report.ShardRecords{{Shard: m.shardOf(), Finished: state == RunSucceeded, Records: decoded(own)}}
	for i, p := range peers {
		rep := replies[i]
		switch {
		case errs[i] != nil && ctx.Err() != nil:
			problems = append(problems, ShardProblem{Shard: p.Shard, Peer: p.Addr, Error: "records not gathered: this replica shut down, and its grace period ended before the share did"})
			continue
		case errs[i] != nil:
			problems = append(problems, ShardProblem{Shard: p.Shard, Peer: p.Addr, Error: "records not gathered: " + errs[i].Error()})
			continue
		case rep.Shard != p.Shard:
			problems = append(problems, ShardProblem{Shard: p.Shard, Peer: p.Addr, Error: fmt.Sprintf("answered as shard %d", rep.Shard)})
			continue
		case rep.State == RunRunning:
			problems = append(problems, ShardProblem{Shard: p.Shard, Peer: p.Addr, Error: fmt.Sprintf("still running %s after this replica's share ended; its records so far are in the report", wait)})
		case rep.State != RunSucceeded && rep.State != state:
			problems = append(problems, ShardProblem{Shard: p.Shard, Peer: p.Addr, Error: "its share ended " + rep.State + ": " + rep.Error})
		}
		shares = append(shares, report.ShardRecords{Shard: record.Shard{Index: p.Shard, Count: shards}, Finished: rep.State == RunSucceeded, Records: decoded(rep.Records)})
	}
	return shares, problems
}

// handOut gives each peer of r the gathered report, so that status and
// history show the whole run on every replica.
func (m *burstManager) handOut(r *burstRun, final RunInfo) {
	r.mu.Lock()
	peers := r.peers
	r.mu.Unlock()
	for _, p := range peers {
		m.wg.Go(func() {
			err := m.cluster.opts.Client.Do(context.Background(), p.Addr, http.MethodPut, clusterPath+"/runs/"+url.PathEscape(final.ID)+"/report", reportTimeout, final, nil)
			m.cluster.metrics.Called(p.Addr, collector.ClusterCallReport, err)
			if err != nil {
				m.d.logger.Warn("cannot hand the gathered burst report to a peer; it shows its own share only", "run", final.ID, "peer", p.Addr, "err", err)
			}
		})
	}
}

// acceptReport keeps the report a gatherer handed this replica in place of
// its own share's.
func (m *burstManager) acceptReport(info RunInfo) error {
	if info.Cluster == nil || !info.Cluster.Merged {
		return errors.New("not a gathered cluster report")
	}
	m.history.replace(info)
	return nil
}

// keep holds an ended share for the gatherer's fetch.
func (c *clusterState) keep(r *burstRun) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kept = append(c.kept, r)
	if len(c.kept) > keptShares {
		c.kept = slices.Delete(c.kept, 0, len(c.kept)-keptShares)
	}
}

// share finds run id's share here, running or kept.
func (m *burstManager) share(id string) *burstRun {
	m.mu.Lock()
	i := slices.IndexFunc(m.active, func(r *burstRun) bool { return r.id() == id })
	if i >= 0 {
		r := m.active[i]
		m.mu.Unlock()
		return r
	}
	m.mu.Unlock()
	c := m.cluster
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.kept {
		if r.id() == id {
			return r
		}
	}
	return nil
}

// shareOf answers a gatherer's fetch of run id (of its search step step;
// -1: of the whole run), once the share has ended or wait has passed.
func (m *burstManager) shareOf(ctx context.Context, id string, step int, wait time.Duration) (shareReply, error) {
	r := m.share(id)
	if r == nil || r.records == nil {
		return shareReply{}, ErrUnknownRun
	}
	if step >= 0 {
		return m.stepShareOf(ctx, r, step, wait)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-r.done:
	case <-t.C:
	case <-ctx.Done():
		return shareReply{}, ctx.Err()
	}
	info := r.snapshot()
	recs, err := r.records.all()
	if err != nil && info.Error == "" {
		info.Error = "some records did not encode: " + err.Error()
	}
	if err != nil && info.State == RunSucceeded {
		info.State = RunFailed // its share is not whole
	}
	return shareReply{Shard: m.shardOf().Index, State: info.State, Error: info.Error, Records: recs}, nil
}

// cancelPeers cancels run id's shares on the other replicas: a cancel on
// any replica cancels the whole run.
func (m *burstManager) cancelPeers(id string) {
	ctx := context.Background()
	addrs, err := m.cluster.opts.Peers.Resolve(ctx, m.cluster.opts.Resolver)
	if err != nil {
		m.d.logger.Warn("cannot cancel the run's shares on the other replicas", "run", id, "err", err)
		return
	}
	for _, addr := range addrs {
		m.wg.Go(func() {
			err := m.cluster.opts.Client.Do(ctx, addr, http.MethodDelete, clusterPath+"/runs/"+url.PathEscape(id), cancelWait+infoTimeout, nil, nil)
			var se *cluster.StatusError
			if errors.As(err, &se) && (se.Status == http.StatusNotFound || se.Status == http.StatusConflict) {
				err = nil // this replica itself, or a share already ended
			}
			m.cluster.metrics.Called(addr, collector.ClusterCallCancel, err)
		})
	}
}
