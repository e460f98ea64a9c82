package collector_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferprobe/inferprobe/collector"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
)

// BenchmarkSeriesObserve is the metrics' cost of one finished 4-chunk
// request, exemplars included: once per request, not per chunk.
func BenchmarkSeriesObserve(b *testing.B) {
	s := collector.NewRequests(prometheus.NewRegistry()).Series(labelsA, report.SLO{})
	rec := okRecord()
	b.ReportAllocs()
	for b.Loop() {
		rec.Seq++
		rec.ID = record.NewRequestID(7, 1, "a", rec.Seq)
		s.Started()
		s.Observe(rec)
	}
}
