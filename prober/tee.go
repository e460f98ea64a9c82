package prober

// Tee returns a Recorder that tells each of recs, in order, of every
// request: a burst's requests go to its Prometheus series and to its report.
func Tee(recs ...Recorder) Recorder { return tee(recs) }

type tee []Recorder

func (t tee) Started() {
	for _, r := range t {
		r.Started()
	}
}

func (t tee) Observe(rec *Record) {
	for _, r := range t {
		r.Observe(rec)
	}
}
