package prober

import "github.com/inferprobe/inferprobe/record"

// Tee returns a Recorder that tells each of recs, in order, of every
// request: a burst's requests go to its Prometheus series and to its report.
func Tee(recs ...Recorder) Recorder { return tee(recs) }

type tee []Recorder

func (t tee) Started() {
	for _, r := range t {
		r.Started()
	}
}

func (t tee) Observe(rec *record.Record) {
	for _, r := range t {
		r.Observe(rec)
	}
}
