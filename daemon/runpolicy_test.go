package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/finite"
	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// slowExec answers each request after delay, or when ctx ends (cancelled).
type slowExec struct{ delay time.Duration }

func (e slowExec) Do(ctx context.Context, _ *prober.Target, req *prober.Request) *record.Record {
	rec := &record.Record{Seq: req.Seq, Scheduled: req.Scheduled, Sent: time.Now(), Status: 200,
		Chunks: []time.Duration{time.Millisecond}, OutputTokens: 1, InputTokens: req.InputTokens}
	select {
	case <-time.After(e.delay):
	case <-ctx.Done():
		rec.Outcome = record.OutcomeCancelled
	}
	rec.Duration = time.Since(rec.Sent)
	return rec
}

// ending is what the run policy decided about a run's end.
type ending struct {
	grace                 time.Duration
	expired               bool
	cut                   int
	clientBound           string
	outcome               finite.Outcome
	ok, cancelled, failed int
}

func endOf(p *finite.Plan, delay time.Duration) ending {
	res := finite.New(p, slowExec{delay: delay}).Execute(context.Background(), context.Background())
	outcome, _ := finite.Verdict(res.Summary, nil)
	s := res.Summary
	return ending{p.Grace, res.GraceExpired, res.Cut, res.ClientBound, outcome, s.OK, s.Cancelled, s.Failed}
}

// TestBenchAndBurstEndAlike: a bench run and a burst planned from the same
// settings end the same way — the same grace period by the kind of limit,
// the same requests cut, the same verdicts — however each caller sets its
// grace period: a request-count run waits for its requests (a burst's
// grace_period does not cut them), a duration run gets the grace period.
func TestBenchAndBurstEndAlike(t *testing.T) {
	target, err := prober.NewTarget("t", &scenarios.Target{URL: "http://127.0.0.1:1/v1", Model: "m", Endpoint: "chat", Timeout: scenarios.Duration(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	synthetic := scenarios.Dataset{Synthetic: &scenarios.Synthetic{InputTokens: scenarios.Lengths{Mean: 8}, OutputTokens: scenarios.Lengths{Mean: 1}}}
	for _, tc := range []struct {
		name        string
		limit       prober.Limit
		benchGrace  time.Duration // what bench's flags give finite (its default, or --benchmark-grace-period)
		burstGrace  time.Duration // the burst's grace_period
		delay       time.Duration
		wantExpired bool
	}{
		{"request count", prober.Limit{Requests: 3}, 30 * time.Second, 20 * time.Millisecond, 150 * time.Millisecond, false},
		{"duration", prober.Limit{Duration: 100 * time.Millisecond}, 20 * time.Millisecond, 20 * time.Millisecond, time.Hour, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arrival := scenarios.Arrival{Pattern: scenarios.ArrivalConstant, Rate: 50}
			burst := burstSpec{seed: 1, burst: scenarios.Burst{Target: "t", Arrival: arrival, Dataset: synthetic,
				Duration: scenarios.Duration(tc.limit.Duration), Requests: tc.limit.Requests, GracePeriod: scenarios.Duration(tc.burstGrace)}}
			burstPlan, _, err := planRun("b", &burst, target, BurstOverrides{}, record.Shard{Count: 1}, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			benchPlan, err := finite.NewPlan(finite.Spec{Name: "burst/b", Probe: &scenarios.Probe{Target: "t", Arrival: arrival, Dataset: synthetic},
				Target: target, Seed: 1, Shard: record.Shard{Count: 1}, Limit: tc.limit, Grace: tc.benchGrace})
			if err != nil {
				t.Fatal(err)
			}
			if want := finite.GraceFor(tc.limit, tc.burstGrace); burstPlan.Grace != want || benchPlan.Grace != want {
				t.Fatalf("grace: burst %v, bench %v, want %v for this limit", burstPlan.Grace, benchPlan.Grace, want)
			}
			bench, b := endOf(benchPlan, tc.delay), endOf(burstPlan, tc.delay)
			if bench != b {
				t.Errorf("bench ended %+v, the burst %+v: want the same end", bench, b)
			}
			if b.expired != tc.wantExpired || b.cut != b.cancelled || (tc.wantExpired && b.cut == 0) {
				t.Errorf("the burst ended %+v: want grace expired %v, and the requests it cut counted as cancelled", b, tc.wantExpired)
			}
			if !tc.wantExpired && b.ok != int(tc.limit.Requests) {
				t.Errorf("the burst ended %+v: want all %d requests waited for", b, tc.limit.Requests)
			}
		})
	}
}
