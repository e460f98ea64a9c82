package e2e

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// protobufAccept is what Prometheus sends to get native histograms.
const protobufAccept = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"

// scrape fetches url with the given Accept header and decodes the families,
// in whatever format the server chose.
func scrape(url, accept string) (map[string]*dto.MetricFamily, expfmt.Format, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept", accept)
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("GET %s: status %d", url, resp.StatusCode)
	}
	format := expfmt.ResponseFormat(resp.Header)
	if format.FormatType() == expfmt.TypeTextPlain {
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(resp.Body)
		return fams, format, err
	}
	fams := map[string]*dto.MetricFamily{}
	dec := expfmt.NewDecoder(resp.Body, format)
	for {
		mf := &dto.MetricFamily{}
		if err := dec.Decode(mf); errors.Is(err, io.EOF) {
			return fams, format, nil
		} else if err != nil {
			return nil, format, fmt.Errorf("decoding %s: %w", url, err)
		}
		fams[mf.GetName()] = mf
	}
}

// scrapeText scrapes url in the Prometheus text format.
func scrapeText(url string) (map[string]*dto.MetricFamily, error) {
	fams, _, err := scrape(url, "text/plain;version=0.0.4")
	return fams, err
}

// matching returns the series of family name that carry every label in
// pairs (name, value, name, value, ...).
func matching(fams map[string]*dto.MetricFamily, name string, pairs ...string) []*dto.Metric {
	var out []*dto.Metric
	mf := fams[name]
	if mf == nil {
		return nil
	}
next:
	for _, m := range mf.GetMetric() {
		for i := 0; i+1 < len(pairs); i += 2 {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == pairs[i] && l.GetValue() == pairs[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}

// value sums the counters or gauges of family name that match pairs; a
// family or series not exported yet counts as 0, as a counter that has not
// been incremented.
func value(fams map[string]*dto.MetricFamily, name string, pairs ...string) float64 {
	var v float64
	for _, m := range matching(fams, name, pairs...) {
		v += m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue()
	}
	return v
}
