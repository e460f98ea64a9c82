package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/inferprobe/inferprobe/stats"
)

// Samples are a run's per-request values, as its profile_export.jsonl
// (AIPerf's or inferprobe's) holds them: per metric tag, each successful
// request's value in the JSON's unit (each chunk gap, for
// inter_chunk_latency), and per throughput tag the rates of
// stats.RateBatches equal slices of the run (stats.BatchRates), each
// request counting in the slice its response ended in.
type Samples struct {
	Values map[string][]float64
	Rates  map[string][]float64
}

// jsonlName is the per-request export beside a profile_export_aiperf.json.
const jsonlName = "profile_export.jsonl"

// LoadSamples reads the per-request samples of the baseline at path (a run
// directory or its profile_export_aiperf.json): its profile_export.jsonl,
// beside it. Without one it returns nil and no error: the baseline is then
// a summary alone.
func LoadSamples(path string) (*Samples, error) {
	dir := path
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		dir = filepath.Dir(path)
	}
	f, err := os.Open(filepath.Join(dir, jsonlName))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := ReadSamples(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return s, nil
}

// Samples are r's per-request samples, read from the JSONL r writes, so
// that both sides of a comparison come through the same reader.
func (r Run) Samples() (*Samples, error) {
	var b bytes.Buffer
	if err := WriteJSONL(&b, r); err != nil {
		return nil, err
	}
	return ReadSamples(&b)
}

// ReadSamples reads a profile_export.jsonl. Failed and cancelled requests
// count in no metric, as in the summary; the throughputs' span runs from
// the first counted request's start to the last one's end.
func ReadSamples(r io.Reader) (*Samples, error) {
	type value struct {
		Value json.RawMessage `json:"value"`
	}
	type line struct {
		Metadata struct {
			Start        int64 `json:"request_start_ns"`
			End          int64 `json:"request_end_ns"`
			WasCancelled bool  `json:"was_cancelled"`
		} `json:"metadata"`
		Metrics map[string]value `json:"metrics"`
		Error   json.RawMessage  `json:"error"`
	}
	out := &Samples{Values: map[string][]float64{}, Rates: map[string][]float64{}}
	var ends []int64
	weights := map[string][]float64{}
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if l.Metadata.WasCancelled || len(l.Error) > 0 && string(l.Error) != "null" {
			continue
		}
		num := func(tag string) float64 {
			var v float64
			json.Unmarshal(l.Metrics[tag].Value, &v)
			return v
		}
		for tag, m := range l.Metrics {
			var one float64
			if json.Unmarshal(m.Value, &one) == nil {
				out.Values[tag] = append(out.Values[tag], one)
				continue
			}
			var many []float64
			if json.Unmarshal(m.Value, &many) == nil {
				out.Values[tag] = append(out.Values[tag], many...)
			}
		}
		first, last = min(first, l.Metadata.Start), max(last, l.Metadata.End)
		ends = append(ends, l.Metadata.End)
		in, osl := num("input_sequence_length"), num("output_sequence_length")
		for tag, w := range map[string]float64{"request_throughput": 1, "output_token_throughput": osl,
			"input_token_throughput": in, "total_token_throughput": in + osl, "goodput": num("good_request_count")} {
			weights[tag] = append(weights[tag], w)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(ends) >= 2*stats.RateBatches && last > first {
		offsets := make([]float64, len(ends))
		for i, e := range ends {
			offsets[i] = float64(e-first) / 1e9
		}
		for tag, w := range weights {
			out.Rates[tag] = stats.BatchRates(offsets, w, float64(last-first)/1e9)
		}
	}
	return out, nil
}
