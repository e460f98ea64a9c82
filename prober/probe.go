package prober

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/inferprobe/inferprobe/prober/arrival"
	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/prober/seeded"
	"github.com/inferprobe/inferprobe/scenarios"
)

// Executor runs one request. The in-process Client is one; a pool of worker
// processes is another.
type Executor interface {
	Do(ctx context.Context, t *Target, req *Request) *Record
}

// Recorder is told when each request starts and how it ended.
type Recorder interface {
	Started()
	Observe(*Record)
}

// Probe is a never-ending seeded stream of requests to one target.
type Probe struct {
	Name     string
	Target   *Target
	params   map[string]any
	arrivals arrival.Process
	prompts  *dataset.Synthetic
}

// NewProbe prepares probe name of a loaded scenario to run against t.
func NewProbe(name string, p *scenarios.Probe, t *Target, seed uint64) (*Probe, error) {
	component := "probe/" + name
	arr, err := arrival.New(p.Arrival.Pattern, p.Arrival.Rate, seeded.New(seed, component+"/arrival"))
	if err != nil {
		return nil, fmt.Errorf("probe %s: %w", name, err)
	}
	if _, err := json.Marshal(p.Params); err != nil {
		return nil, fmt.Errorf("probe %s: params cannot be sent as JSON: %w", name, err)
	}
	return &Probe{
		Name:     name,
		Target:   t,
		params:   p.Params,
		arrivals: arr,
		prompts:  dataset.NewSynthetic(*p.Dataset.Synthetic, seed, component),
	}, nil
}

// Run sends the probe's requests on its schedule until ctx ends, then waits for
// the requests it sent. Requests run under reqCtx, which outlives ctx so that
// stopping a probe lets its in-flight requests finish.
func (p *Probe) Run(ctx, reqCtx context.Context, exec Executor, rec Recorder) {
	var inFlight sync.WaitGroup
	defer inFlight.Wait()
	start := time.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for seq := uint64(0); ; seq++ {
		at := start.Add(p.arrivals.Next())
		// Build before waiting, so building never delays the send.
		req, err := NewRequest(p.Target, p.prompts.Next(), p.params)
		timer.Reset(time.Until(at))
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		rec.Started()
		if err != nil {
			// Unreachable after NewProbe's check, but a request is never lost silently.
			failed := &Record{Seq: seq, Scheduled: at, Sent: time.Now(), FirstOutput: -1}
			failed.fail(ReasonProtocol, 0, err)
			rec.Observe(failed)
			continue
		}
		req.Seq, req.Scheduled = seq, at
		inFlight.Go(func() { rec.Observe(exec.Do(reqCtx, p.Target, req)) })
	}
}
