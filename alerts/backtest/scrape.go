package backtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"
	"github.com/prometheus/prometheus/storage"
)

// Target labels a scrape adds to every series, as Prometheus's scrape of
// one inferprobe with job="inferprobe" would.
const (
	jobLabel      = "inferprobe"
	instanceLabel = "inferprobe:9464"
)

// protobufContentType is what inferprobe answers a Prometheus that asks for
// native histograms with.
const protobufContentType = "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"

// scraper turns a gathering of a registry into samples in storage through
// Prometheus's own protobuf parser, which decides, as in a real scrape,
// whether a histogram is stored as native or as classic series.
type scraper struct {
	gatherer prometheus.Gatherer
	// reads says whether the rules may read a metric: the families they
	// cannot are left out of the scrape, which is most of its cost.
	reads   func(name string) bool
	options textparse.ParserOptions
	symbols *labels.SymbolTable
	buf     bytes.Buffer
	// series caches each exposed series' labels and storage reference, as
	// the scrape loop does.
	series map[string]cachedSeries
	up     cachedSeries
}

type cachedSeries struct {
	ref    storage.SeriesRef
	labels labels.Labels
}

// readRegisterer registers with reg only the collectors one of whose
// metrics the rules may read: a gathering then spends nothing on the others,
// which the scrape would leave out anyway (most of inferprobe's histograms).
type readRegisterer struct {
	prometheus.Registerer
	reads func(name string) bool
}

func (r readRegisterer) Register(c prometheus.Collector) error {
	descs := make(chan *prometheus.Desc)
	go func() {
		c.Describe(descs)
		close(descs)
	}()
	read := false
	for d := range descs {
		// A Desc's name is only in its String; the fqName field is not exported.
		name, _, _ := strings.Cut(strings.TrimPrefix(d.String(), `Desc{fqName: "`), `"`)
		read = read || readsFamily(r.reads, name)
	}
	if !read {
		return nil
	}
	return r.Registerer.Register(c)
}

func (r readRegisterer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

// readsFamily says whether reads reads a series of the family name, a
// histogram's classic series included.
func readsFamily(reads func(name string) bool, name string) bool {
	return reads(name) || reads(name+"_bucket") || reads(name+"_sum") || reads(name+"_count")
}

func newScraper(g prometheus.Gatherer, reads func(name string) bool, classicOnly bool) *scraper {
	return &scraper{
		gatherer: g,
		reads:    reads,
		// Without native histogram ingestion the parser sees a histogram's
		// classic buckets only; with it, one that has native buckets is
		// native only (scrape_native_histograms: true, classic ones not kept).
		options: textparse.ParserOptions{IgnoreNativeHistograms: classicOnly},
		symbols: labels.NewSymbolTable(),
		series:  map[string]cachedSeries{},
		up:      cachedSeries{labels: labels.FromStrings("__name__", "up", "instance", instanceLabel, "job", jobLabel)},
	}
}

// scrape appends one scrape at t (milliseconds) to app.
func (s *scraper) scrape(app storage.AppenderV2, t int64) error {
	families, err := s.gatherer.Gather()
	if err != nil {
		return err
	}
	s.buf.Reset()
	enc := expfmt.NewEncoder(&s.buf, expfmt.NewFormat(expfmt.TypeProtoDelim))
	for _, mf := range families {
		name := mf.GetName()
		if !readsFamily(s.reads, name) {
			continue
		}
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	p, err := textparse.New(s.buf.Bytes(), protobufContentType, s.symbols, s.options)
	if err != nil {
		return err
	}
	for {
		entry, err := p.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("parsing the scrape: %w", err)
		}
		switch entry {
		case textparse.EntrySeries:
			key, _, v := p.Series()
			if err := s.append(app, p, key, t, v, nil); err != nil {
				return err
			}
		case textparse.EntryHistogram:
			key, _, h, fh := p.Histogram()
			if fh != nil {
				return fmt.Errorf("%s: a float histogram, which inferprobe does not expose", key)
			}
			if err := s.append(app, p, key, t, 0, h); err != nil {
				return err
			}
		}
	}
	ref, err := app.Append(s.up.ref, s.up.labels, 0, t, 1, nil, nil, storage.AppendV2Options{})
	s.up.ref = ref
	return err
}

// append appends the series p is at, keyed by key, with value v or h.
func (s *scraper) append(app storage.AppenderV2, p textparse.Parser, key []byte, t int64, v float64, h *histogram.Histogram) error {
	c, ok := s.series[string(key)]
	if !ok {
		var lset labels.Labels
		p.Labels(&lset)
		b := labels.NewBuilder(lset)
		b.Set("job", jobLabel)
		b.Set("instance", instanceLabel)
		c.labels = b.Labels()
	}
	ref, err := app.Append(c.ref, c.labels, 0, t, v, h, nil, storage.AppendV2Options{})
	if err != nil {
		return fmt.Errorf("appending %s: %w", c.labels, err)
	}
	c.ref = ref
	s.series[string(key)] = c
	return nil
}
