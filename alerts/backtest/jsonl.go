package backtest

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"slices"
	"time"
)

// exportLine is what ReadProfileExport takes from a line of AIPerf's
// profile_export.jsonl, as bench writes it (report/export.WriteJSONL) and
// as AIPerf does.
type exportLine struct {
	Metadata struct {
		RequestStartNs int64 `json:"request_start_ns"`
		RequestEndNs   int64 `json:"request_end_ns"`
		WasCancelled   bool  `json:"was_cancelled"`
	} `json:"metadata"`
	Metrics map[string]exportMetric `json:"metrics"`
	Error   *struct {
		Type string `json:"type"`
	} `json:"error"`
}

type exportMetric struct {
	Value json.RawMessage `json:"value"`
	Unit  string          `json:"unit"`
}

// ReadProfileExport yields the requests of a profile_export.jsonl in order
// of their end (request_end_ns), which is when inferprobe records a
// request; the file has them in order of sequence, so it is read whole
// first. A request is ok when its line has no error; its TTFT, ITL and
// latency are time_to_first_token, inter_token_latency and request_latency
// (for a failure, its end less its start); it is good when
// good_request_count is 1, or, in a run without an SLO (no
// good_request_count), when it is ok. Cancelled requests are left out.
// Target and Model are empty: the file names neither.
func ReadProfileExport(r io.Reader) iter.Seq2[Probe, error] {
	return func(yield func(Probe, error) bool) {
		probes, err := readProfileExport(r)
		if err != nil {
			yield(Probe{}, err)
			return
		}
		for _, p := range probes {
			if !yield(p, nil) {
				return
			}
		}
	}
}

func readProfileExport(r io.Reader) ([]Probe, error) {
	var probes []Probe
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20) // a line holds every inter-chunk gap of its request
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var line exportLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if line.Metadata.WasCancelled {
			continue
		}
		p, err := line.probe()
		if err == nil {
			err = p.check()
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		probes = append(probes, p)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	slices.SortStableFunc(probes, func(a, b Probe) int { return a.Time.Compare(b.Time) })
	return probes, nil
}

func (l *exportLine) probe() (Probe, error) {
	m := &l.Metadata
	if m.RequestEndNs == 0 || m.RequestEndNs < m.RequestStartNs {
		return Probe{}, fmt.Errorf("request_end_ns %d: missing or before request_start_ns %d", m.RequestEndNs, m.RequestStartNs)
	}
	p := Probe{Time: time.Unix(0, m.RequestEndNs), OK: l.Error == nil, Latency: time.Duration(m.RequestEndNs - m.RequestStartNs)}
	var err error
	if p.TTFT, err = l.duration("time_to_first_token"); err != nil {
		return Probe{}, err
	}
	if !p.OK {
		return p, nil
	}
	if p.ITL, err = l.duration("inter_token_latency"); err != nil {
		return Probe{}, err
	}
	latency, err := l.duration("request_latency")
	if err != nil {
		return Probe{}, err
	}
	p.Latency = cmp.Or(latency, p.Latency)
	p.Good = true
	if g, ok := l.Metrics["good_request_count"]; ok {
		var v float64
		if err := json.Unmarshal(g.Value, &v); err != nil {
			return Probe{}, fmt.Errorf("good_request_count: %w", err)
		}
		p.Good = v == 1
	}
	return p, nil
}

// units are the time units of AIPerf's metrics.
var units = map[string]time.Duration{"ns": time.Nanosecond, "us": time.Microsecond, "ms": time.Millisecond, "s": time.Second, "sec": time.Second}

// duration is metric name's value, 0 when the line has none.
func (l *exportLine) duration(name string) (time.Duration, error) {
	m, ok := l.Metrics[name]
	if !ok {
		return 0, nil
	}
	unit, ok := units[m.Unit]
	if !ok {
		return 0, fmt.Errorf("%s: unit %q is not a unit of time", name, m.Unit)
	}
	var v float64
	if err := json.Unmarshal(m.Value, &v); err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return time.Duration(v * float64(unit)), nil
}
