// Package backtest evaluates Prometheus alerting rules over recorded probe
// requests in simulated time: the requests go through inferprobe's own
// request metrics, a simulated scrape stores them in a Prometheus TSDB, and
// Prometheus's own rule groups and PromQL engine evaluate the rules, so
// that for, keep_firing_for and every function behave as in Prometheus.
package backtest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/tsdb"
)

// Firing is one alert's firing: from when it began firing (after its for)
// to when it stopped (after its keep_firing_for).
type Firing struct {
	Alert, Severity string
	Labels          map[string]string // the alert's labels but alertname and severity
	Start           time.Time
	End             *time.Time // nil: still firing when the records end
}

// Options configure Run.
type Options struct {
	RuleFiles      []string
	ClassicOnly    bool          // a Prometheus that does not ingest native histograms
	ScrapeInterval time.Duration // 0: 15s
	// EvaluationInterval is the interval of the groups that set none;
	// 0: 1m, Prometheus's default.
	EvaluationInterval time.Duration
	Progress           io.Writer // optional
}

// Prometheus's defaults, which Run's storage and engine keep.
const (
	defaultScrapeInterval     = 15 * time.Second
	defaultEvaluationInterval = time.Minute
	lookbackDelta             = 5 * time.Minute
	maxSamplesPerQuery        = 50_000_000
	queryTimeout              = 2 * time.Minute
)

// truncateEvery is how much simulated time passes between truncations of
// the data no rule can read any more.
const truncateEvery = time.Hour

// Run evaluates opt.RuleFiles over the simulated time that probes span,
// which must come in order of their Time, and returns every firing in order
// of start. Scrapes fall on multiples of the scrape interval and each
// group's evaluations on multiples of its interval (Unix time); at one
// instant the probes that ended by then are recorded first, then the scrape,
// then the groups in the order of the files and of the groups in them.
func Run(ctx context.Context, probes iter.Seq2[Probe, error], opt Options) ([]Firing, error) {
	if len(opt.RuleFiles) == 0 {
		return nil, errors.New("no rule files")
	}
	scrapeInterval := cmp.Or(opt.ScrapeInterval, defaultScrapeInterval)
	evaluationInterval := cmp.Or(opt.EvaluationInterval, defaultEvaluationInterval)
	if scrapeInterval < 0 || evaluationInterval < 0 {
		return nil, errors.New("a negative interval")
	}
	progress := opt.Progress
	if progress == nil {
		progress = io.Discard
	}

	dir, err := os.MkdirTemp("", "alert-backtest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	db, err := openStorage(dir)
	if err != nil {
		return nil, err
	}
	defer db.Close()

	promqlParser := parser.NewParser(parser.Options{})
	engine := promql.NewEngine(promql.EngineOpts{
		Logger:                   promslog.NewNopLogger(),
		MaxSamples:               maxSamplesPerQuery,
		Timeout:                  queryTimeout,
		LookbackDelta:            lookbackDelta,
		EnableAtModifier:         true,
		EnableNegativeOffset:     true,
		NoStepSubqueryIntervalFn: func(int64) int64 { return evaluationInterval.Milliseconds() },
		Parser:                   &cachingParser{Parser: promqlParser},
	})
	managerOptions := &rules.ManagerOptions{
		QueryFunc:    rules.EngineQueryFunc(engine, db),
		AppendableV2: db,
		Queryable:    db,
		Context:      ctx,
		NotifyFunc:   func(context.Context, string, ...*rules.Alert) {},
		Logger:       promslog.NewNopLogger(),
		Parser:       promqlParser,
		// Prometheus's own concurrency: a group's rules that neither read
		// nor feed another of its rules are evaluated side by side.
		ConcurrentEvalsEnabled: true,
		MaxConcurrentEvals:     int64(runtime.GOMAXPROCS(0)),
	}
	manager := rules.NewManager(managerOptions)
	groups, err := loadGroups(manager, promqlParser, evaluationInterval, opt.RuleFiles)
	if err != nil {
		return nil, err
	}
	groups, dropped := alertsOnly(groups, managerOptions)
	if dropped > 0 {
		fmt.Fprintf(progress, "alert-backtest: %d recording rules feed no alert; they are not evaluated\n", dropped)
	}
	keep := lookback(groups, lookbackDelta)
	if keep == unbounded {
		fmt.Fprintln(progress, "alert-backtest: a rule reads data at a time fixed in advance; keeping all data")
	} else {
		fmt.Fprintf(progress, "alert-backtest: the rules look back %v at most; older data is dropped\n", keep)
	}

	reg := prometheus.NewRegistry()
	reads := readsMetric(groups)
	rec := newRecorder(readRegisterer{reg, reads})
	sim := &simulation{
		ctx: ctx, db: db, groups: groups, keep: keep, progress: progress,
		recorder: rec, scraper: newScraper(reg, reads, opt.ClassicOnly),
		scrapeInterval: scrapeInterval, open: map[*rules.AlertingRule]map[string]int{},
	}
	if err := sim.run(probes); err != nil {
		return nil, err
	}
	slices.SortStableFunc(sim.firings, func(a, b Firing) int { return a.Start.Compare(b.Start) })
	return sim.firings, nil
}

// openStorage opens a TSDB without a WAL and without compaction: its head
// holds everything, and the simulation truncates it.
func openStorage(dir string) (*tsdb.DB, error) {
	opts := tsdb.DefaultOptions()
	opts.WALSegmentSize = -1
	opts.RetentionDuration = 0
	// Appends and queries take turns, so isolation has nothing to do; on,
	// it costs each query a walk over all of a series' chunks per chunk read.
	opts.IsolationDisabled = true
	db, err := tsdb.Open(dir, promslog.NewNopLogger(), nil, opts, nil)
	if err != nil {
		return nil, err
	}
	db.DisableCompactions()
	return db, nil
}

// loadGroups loads files as Prometheus does and orders the groups as they
// appear in them.
func loadGroups(m *rules.Manager, p parser.Parser, interval time.Duration, files []string) ([]*rules.Group, error) {
	byKey, errs := m.LoadGroups(interval, labels.EmptyLabels(), "", nil, false, files...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	// The manager keeps groups in a map: their order comes from the files.
	position := map[string]int{}
	for _, f := range files {
		parsed, errs := rulefmt.ParseFile(f, false, model.UTF8Validation, p, promslog.NewNopLogger())
		if len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
		for _, g := range parsed.Groups {
			position[rules.GroupKey(f, g.Name)] = len(position)
		}
	}
	groups := slices.Collect(maps.Values(byKey))
	slices.SortFunc(groups, func(a, b *rules.Group) int {
		return cmp.Compare(position[rules.GroupKey(a.File(), a.Name())], position[rules.GroupKey(b.File(), b.Name())])
	})
	for _, g := range groups {
		for _, r := range g.Rules() {
			// As promtool does: a restored rule writes its ALERTS series
			// from the start, there being no earlier state to restore.
			if ar, ok := r.(*rules.AlertingRule); ok {
				ar.SetRestored(true)
			}
		}
	}
	return groups, nil
}
