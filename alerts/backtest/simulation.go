package backtest

import (
	"context"
	"fmt"
	"io"
	"iter"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/tsdb"
)

// simulation is one Run's state as simulated time goes on.
type simulation struct {
	ctx      context.Context
	db       *tsdb.DB
	groups   []*rules.Group
	keep     time.Duration // how much data before now the rules may read
	progress io.Writer
	recorder *recorder
	scraper  *scraper

	scrapeInterval time.Duration
	nextScrape     time.Time
	nextEvals      []time.Time     // by group
	evalTime       []time.Duration // by group, for the rule writer to see what costs
	truncated      time.Time       // when the storage was last truncated

	firings []Firing
	// open holds the index in firings of each alert firing now, by rule
	// and labels.
	open map[*rules.AlertingRule]map[string]int
}

// run feeds probes through the simulation, up to the last probe's time.
func (s *simulation) run(probes iter.Seq2[Probe, error]) error {
	next, stop := iter.Pull2(probes)
	defer stop()
	p, err, more := next()
	if !more {
		return fmt.Errorf("no records")
	}
	if err != nil {
		return err
	}
	start := p.Time
	s.nextScrape = ceil(start, s.scrapeInterval)
	s.nextEvals = make([]time.Time, len(s.groups))
	s.evalTime = make([]time.Duration, len(s.groups))
	for i, g := range s.groups {
		s.nextEvals[i] = ceil(start, g.Interval())
	}
	s.truncated = start
	fmt.Fprintf(s.progress, "alert-backtest: records start at %s\n", start.UTC().Format(time.RFC3339))
	last, n, reported := start, 0, start
	for {
		tick := s.nextScrape
		for _, t := range s.nextEvals {
			if t.Before(tick) {
				tick = t
			}
		}
		if more && !p.Time.After(tick) {
			if p.Time.Before(last) {
				return fmt.Errorf("record %d ends at %s, before the one before it (%s): records must be in order of time",
					n+1, p.Time.UTC().Format(time.RFC3339Nano), last.UTC().Format(time.RFC3339Nano))
			}
			if err := p.check(); err != nil {
				return fmt.Errorf("record %d: %w", n+1, err)
			}
			s.recorder.observe(&p)
			last, n = p.Time, n+1
			if p, err, more = next(); err != nil {
				return err
			}
			continue
		}
		if !more && tick.After(last) {
			break
		}
		if err := s.ctx.Err(); err != nil {
			return err
		}
		if err := s.step(tick); err != nil {
			return err
		}
		if tick.Sub(reported) >= 24*time.Hour {
			fmt.Fprintf(s.progress, "alert-backtest: %s, %d records\n", tick.UTC().Format(time.RFC3339), n)
			reported = tick
		}
	}
	fmt.Fprintf(s.progress, "alert-backtest: records end at %s, %d records\n", last.UTC().Format(time.RFC3339), n)
	for i, g := range s.groups {
		fmt.Fprintf(s.progress, "alert-backtest: group %s took %v to evaluate\n", g.Name(), s.evalTime[i].Round(time.Millisecond))
	}
	return nil
}

// step does what falls at t: the scrape, then the groups due.
func (s *simulation) step(t time.Time) error {
	if t.Equal(s.nextScrape) {
		app := s.db.AppenderV2(s.ctx)
		if err := s.scraper.scrape(app, t.UnixMilli()); err != nil {
			app.Rollback()
			return fmt.Errorf("scrape at %s: %w", t.UTC().Format(time.RFC3339), err)
		}
		if err := app.Commit(); err != nil {
			return err
		}
		s.nextScrape = t.Add(s.scrapeInterval)
	}
	for i, g := range s.groups {
		if !t.Equal(s.nextEvals[i]) {
			continue
		}
		began := time.Now()
		g.Eval(s.ctx, t)
		s.evalTime[i] += time.Since(began)
		for _, r := range g.Rules() {
			if err := r.LastError(); err != nil {
				return fmt.Errorf("group %s, rule %s at %s: %w", g.Name(), r.Name(), t.UTC().Format(time.RFC3339), err)
			}
		}
		s.collect(g, t)
		s.nextEvals[i] = t.Add(g.Interval())
	}
	if s.keep != unbounded && t.Sub(s.truncated) >= truncateEvery {
		if err := s.db.Head().Truncate(t.Add(-s.keep).UnixMilli()); err != nil {
			return fmt.Errorf("truncating the storage: %w", err)
		}
		s.truncated = t
	}
	return nil
}

// collect updates the firings with the state of g's alerts after its
// evaluation at t.
func (s *simulation) collect(g *rules.Group, t time.Time) {
	for _, r := range g.AlertingRules() {
		open := s.open[r]
		if open == nil {
			open = map[string]int{}
			s.open[r] = open
		}
		firing := map[string]bool{}
		r.ForEachActiveAlert(func(a *rules.Alert) {
			if a.State != rules.StateFiring {
				return
			}
			key := a.Labels.String()
			firing[key] = true
			if _, ok := open[key]; ok {
				return
			}
			open[key] = len(s.firings)
			s.firings = append(s.firings, Firing{
				Alert:    r.Name(),
				Severity: a.Labels.Get("severity"),
				Labels:   labels.NewBuilder(a.Labels).Del(labels.AlertName, "severity").Labels().Map(),
				Start:    a.FiredAt,
			})
		})
		for key, i := range open {
			if !firing[key] {
				end := t
				s.firings[i].End = &end
				delete(open, key)
			}
		}
	}
}

// ceil is the first multiple of d since the Unix epoch at or after t.
func ceil(t time.Time, d time.Duration) time.Time {
	n := t.UnixNano()
	r := n % int64(d)
	if r < 0 {
		r += int64(d)
	}
	if r == 0 {
		return t
	}
	return time.Unix(0, n-r+int64(d))
}
