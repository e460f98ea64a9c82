// Package gputelemetry scrapes DCGM exporter endpoints (Prometheus text, as
// dcgm-exporter serves it) during a finite run, as AIPerf 0.13's
// --gpu-telemetry URL does: one record per GPU per scrape, under AIPerf's
// field names and units, and each GPU's summary over the measured requests.
// report/export writes them as gpu_telemetry_export.jsonl and
// telemetry_data. Package collector/gpu is the other source of GPU figures:
// this host's GPUs, read through DCGM or NVML.
package gputelemetry

import (
	"cmp"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/inferprobe/inferprobe/stats"
)

// Field is one of AIPerf's telemetry fields: the DCGM metric it is read
// from, the factor from DCGM's unit to AIPerf's, its display name and unit,
// and whether it is a counter (summarised as its increase over the run).
type Field struct {
	Key     string // AIPerf's name, e.g. nvidia_power_usage
	DCGM    string // dcgm-exporter's metric name, without _total
	Scale   float64
	Display string // e.g. NVIDIA GPU Power Usage
	Unit    string
	Counter bool
}

// Fields are AIPerf 0.13's NVIDIA fields, in the order of its
// GPU_TELEMETRY_METRICS_CONFIG (the order of its exports), with
// DCGM_TO_FIELD_MAPPING and the DCGM collector's scaling factors. The
// JPEG field has no DCGM source in AIPerf (only pynvml fills it).
var Fields = []Field{
	{"nvidia_power_usage", "DCGM_FI_DEV_POWER_USAGE", 1, "NVIDIA GPU Power Usage", "W", false},
	{"nvidia_energy_consumption", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", 1e-9, "NVIDIA Energy Consumption", "MJ", true}, // mJ
	{"nvidia_gpu_utilization", "DCGM_FI_DEV_GPU_UTIL", 1, "NVIDIA GPU Utilization", "%", false},
	{"nvidia_memory_utilization", "DCGM_FI_DEV_MEM_COPY_UTIL", 1, "NVIDIA Memory Utilization", "%", false},
	{"nvidia_memory_used", "DCGM_FI_DEV_FB_USED", 1.048576e-3, "NVIDIA GPU Memory Used", "GB", false}, // MiB
	{"nvidia_temperature", "DCGM_FI_DEV_GPU_TEMP", 1, "NVIDIA GPU Temperature", "°C", false},
	{"nvidia_sm_utilization", "DCGM_FI_PROF_SM_ACTIVE", 100, "NVIDIA SM Utilization", "%", false}, // a ratio
	{"nvidia_decoder_utilization", "DCGM_FI_DEV_DEC_UTIL", 1, "NVIDIA Decoder Utilization", "%", false},
	{"nvidia_encoder_utilization", "DCGM_FI_DEV_ENC_UTIL", 1, "NVIDIA Encoder Utilization", "%", false},
	{"nvidia_jpg_utilization", "", 1, "NVIDIA JPEG Utilization", "%", false},
	{"nvidia_xid_errors", "DCGM_FI_DEV_XID_ERRORS", 1, "NVIDIA XID Errors", "count", true},
	{"nvidia_power_violation", "DCGM_FI_DEV_POWER_VIOLATION", 1e-3, "NVIDIA Power Violation", "us", true}, // ns
}

// GPU is what identifies a GPU: dcgm-exporter's labels, under AIPerf's
// names.
type GPU struct {
	Index     int
	UUID      string
	ModelName string
	PCIBusID  string
	Device    string
	Hostname  string
	Namespace string
	Pod       string
}

// Record is one GPU's reading at one scrape: AIPerf's TelemetryRecord.
type Record struct {
	GPU
	At     time.Time
	Source string // the URL scraped
	// Values are by Field.Key, in AIPerf's units; a field the endpoint
	// did not export is absent.
	Values map[string]float64
}

// records turns one scrape of source into a record per GPU, as AIPerf's
// DCGM collector does: series without a numeric gpu label are skipped, the
// first series of a GPU gives its labels, and non-finite values are left
// out.
func records(mfs map[string]*dto.MetricFamily, source string, at time.Time) []Record {
	byDCGM := map[string]Field{}
	for _, f := range Fields {
		if f.DCGM != "" {
			byDCGM[f.DCGM] = f
		}
	}
	var out []Record
	index := map[int]int{}
	for _, name := range sortedKeys(mfs) {
		field, known := byDCGM[strings.TrimSuffix(name, "_total")]
		for _, m := range mfs[name].GetMetric() {
			v, ok := value(m)
			if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			gpu, err := strconv.Atoi(labels["gpu"])
			if err != nil {
				continue
			}
			i, seen := index[gpu]
			if !seen {
				i = len(out)
				index[gpu] = i
				out = append(out, Record{At: at, Source: source, Values: map[string]float64{}, GPU: GPU{
					Index: gpu, UUID: labels["UUID"], ModelName: labels["modelName"], PCIBusID: labels["pci_bus_id"],
					Device: labels["device"], Hostname: labels["Hostname"], Namespace: labels["namespace"], Pod: labels["pod"]}})
			}
			if known {
				out[i].Values[field.Key] = v * field.Scale
			}
		}
	}
	// A GPU seen only in metrics AIPerf does not map gives no record.
	kept := out[:0]
	for _, r := range out {
		if len(r.Values) > 0 {
			kept = append(kept, r)
		}
	}
	return kept
}

func value(m *dto.Metric) (float64, bool) {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue(), true
	case m.Counter != nil:
		return m.Counter.GetValue(), true
	case m.Untyped != nil:
		return m.Untyped.GetValue(), true
	}
	return 0, false
}

// Display is AIPerf's name of an endpoint in its exports: host and path,
// without the scheme and /metrics.
func Display(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Host + strings.TrimSuffix(p.Path, "/metrics")
}

// Summary is one GPU's figures over the measured requests.
type Summary struct {
	GPU
	Source string
	// Metrics are by Field.Key, for the fields it has readings of; a
	// counter's Stats holds only Avg, its increase.
	Metrics map[string]stats.Stats
}

// Summarise is each GPU's figures from start to the last reading, as
// AIPerf's accumulator computes them: a gauge's statistics over the
// readings at or after start (standard deviation with n-1, 0 for one
// reading), a counter's increase from the last reading before start (else
// the first after it) to the last, 0 when it went down (a reset). GPUs are
// grouped by source, sources in the order first seen, and by index within
// one.
func Summarise(recs []Record, start time.Time) []Summary {
	type key struct {
		src string
		gpu int
	}
	var order []key
	series := map[key][]Record{}
	for _, r := range recs {
		k := key{r.Source, r.Index}
		if _, ok := series[k]; !ok {
			order = append(order, k)
		}
		series[k] = append(series[k], r)
	}
	sources := map[string]int{}
	for _, k := range order {
		if _, ok := sources[k.src]; !ok {
			sources[k.src] = len(sources)
		}
	}
	slices.SortFunc(order, func(a, b key) int {
		return cmp.Or(cmp.Compare(sources[a.src], sources[b.src]), cmp.Compare(a.gpu, b.gpu))
	})
	var out []Summary
	for _, k := range order {
		rs := series[k]
		s := Summary{GPU: rs[0].GPU, Source: k.src, Metrics: map[string]stats.Stats{}}
		for _, f := range Fields {
			var before *float64
			var in []float64
			for _, r := range rs {
				v, ok := r.Values[f.Key]
				if !ok {
					continue
				}
				if r.At.Before(start) {
					before = &v
					continue
				}
				in = append(in, v)
			}
			if len(in) == 0 {
				continue
			}
			if f.Counter {
				ref := in[0]
				if before != nil {
					ref = *before
				}
				s.Metrics[f.Key] = stats.Stats{Avg: max(in[len(in)-1]-ref, 0)}
				continue
			}
			st := stats.Of(in, 0)
			st.Std = 0
			if n := float64(len(in)); n > 1 {
				var sq float64
				for _, v := range in {
					sq += (v - st.Avg) * (v - st.Avg)
				}
				st.Std = math.Sqrt(sq / (n - 1))
			}
			s.Metrics[f.Key] = st
		}
		out = append(out, s)
	}
	return out
}
