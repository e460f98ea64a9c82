package collector_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/inferprobe/inferprobe/collector"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
)

// TestExemplars checks that the TTFT, TTFOT, ITL and duration histograms,
// native and classic, carry an exemplar naming the request, and that the
// other histograms carry none.
func TestExemplars(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := collector.NewRequests(reg).Series(labelsA, report.SLO{})
	rec := okRecord()
	rec.ID = record.NewRequestID(7, 1, "a", rec.Seq)
	s.Started()
	s.Observe(rec)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"inferprobe_time_to_first_token_seconds":        0.1,
		"inferprobe_time_to_first_output_token_seconds": 0.11,
		"inferprobe_inter_token_latency_seconds":        0.01,
		"inferprobe_request_duration_seconds":           0.14,
	}
	for _, mf := range mfs {
		if mf.GetType() != dto.MetricType_HISTOGRAM {
			continue
		}
		h := mf.GetMetric()[0].GetHistogram()
		var classic []*dto.Exemplar
		for _, b := range h.GetBucket() {
			if e := b.GetExemplar(); e != nil {
				classic = append(classic, e)
			}
		}
		v, ok := want[mf.GetName()]
		if !ok {
			if len(h.GetExemplars()) > 0 || len(classic) > 0 {
				t.Errorf("%s has exemplars", mf.GetName())
			}
			continue
		}
		delete(want, mf.GetName())
		for kind, es := range map[string][]*dto.Exemplar{"native": h.GetExemplars(), "classic": classic} {
			if len(es) != 1 {
				t.Errorf("%s: %d %s exemplars, want 1", mf.GetName(), len(es), kind)
				continue
			}
			e := es[0]
			labels := map[string]string{}
			for _, l := range e.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if e.GetValue() != v || labels[collector.ExemplarRequestID] != rec.ID.String() || labels[collector.ExemplarTraceID] != rec.ID.TraceID() {
				t.Errorf("%s: %s exemplar %v at %v, want request %s trace %s at %v", mf.GetName(), kind, labels, e.GetValue(), rec.ID, rec.ID.TraceID(), v)
			}
		}
	}
	for name := range want {
		t.Errorf("%s not gathered", name)
	}
}
