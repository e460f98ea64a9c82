package export

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/inferprobe/inferprobe/gputelemetry"
	"github.com/inferprobe/inferprobe/stats"
)

// artifactGPUJSONL is AIPerf 0.13's per-scrape GPU telemetry export.
const artifactGPUJSONL = "gpu_telemetry_export.jsonl"

// WriteGPUTelemetryJSONL writes gpu_telemetry_export.jsonl as AIPerf 0.13
// does: a line per GPU per scrape (its TelemetryRecord, without the fields
// it has no value for), in the order scraped.
func WriteGPUTelemetryJSONL(w io.Writer, r Run) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, rec := range r.GPUEndpoints.Records {
		line := append(gpuMetadata(rec.GPU),
			kv{"platform", "nvidia"},
			kv{"timestamp_ns", rec.At.UnixNano()},
			kv{"telemetry_source_url", rec.Source})
		data := obj{}
		for _, f := range gputelemetry.Fields {
			if v, ok := rec.Values[f.Key]; ok {
				data = append(data, kv{f.Key, v})
			}
		}
		if err := enc.Encode(append(line, kv{"telemetry_data", data})); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// gpuMetadata is AIPerf's GpuMetadata of g, without the labels it lacks.
func gpuMetadata(g gputelemetry.GPU) obj {
	o := obj{{"gpu_index", g.Index}, {"gpu_uuid", g.UUID}, {"gpu_model_name", g.ModelName}}
	for _, e := range []kv{{"pci_bus_id", g.PCIBusID}, {"device", g.Device}, {"hostname", g.Hostname},
		{"namespace", g.Namespace}, {"pod_name", g.Pod}} {
		if e.v != "" {
			o = append(o, e)
		}
	}
	return o
}

// telemetryData is profile_export_aiperf.json's telemetry_data: the
// endpoints scraped and, by endpoint (AIPerf's display name) and GPU
// (gpu_N), each field's statistics over the measured requests; a counter's
// avg is its increase. Empty when no endpoint was given.
func (r Run) telemetryData() obj {
	start, end := isoTime(r.Summary.Start), isoTime(r.Summary.End)
	configured, reachable := []string{}, []string{}
	endpoints := obj{}
	if c := r.GPUEndpoints; c != nil {
		configured, reachable = nonNil(c.Configured), nonNil(c.Reachable)
		start, end = isoTime(c.Start), isoTime(c.End)
		var display string
		var gpus obj
		for _, s := range gputelemetry.Summarise(c.Records, c.Start) {
			if d := gputelemetry.Display(s.Source); d != display {
				if gpus != nil {
					endpoints = append(endpoints, kv{display, obj{{"gpus", gpus}}})
				}
				display, gpus = d, obj{}
			}
			metrics := obj{}
			for _, f := range gputelemetry.Fields {
				if st, ok := s.Metrics[f.Key]; ok {
					metrics = append(metrics, kv{f.Key, gpuStats(f, st)})
				}
			}
			summary := obj{{"gpu_index", s.Index}, {"gpu_name", s.ModelName}, {"gpu_uuid", s.UUID}, {"platform", "nvidia"}}
			for _, e := range []kv{{"hostname", s.Hostname}, {"namespace", s.Namespace}, {"pod_name", s.Pod}} {
				if e.v != "" {
					summary = append(summary, e)
				}
			}
			gpus = append(gpus, kv{"gpu_" + strconv.Itoa(s.Index), append(summary, kv{"metrics", metrics})})
		}
		if gpus != nil {
			endpoints = append(endpoints, kv{display, obj{{"gpus", gpus}}})
		}
	}
	return obj{
		{"summary", obj{{"endpoints_configured", configured}, {"endpoints_successful", reachable}, {"start_time", start}, {"end_time", end}}},
		{"endpoints", endpoints}, {"error_summary", []obj{}},
	}
}

// gpuStats is a field's result as AIPerf writes it: a gauge's statistics,
// a counter's increase alone.
func gpuStats(f gputelemetry.Field, st stats.Stats) obj {
	if f.Counter {
		return obj{{"unit", f.Unit}, {"avg", st.Avg}}
	}
	return statsObj(f.Unit, &st)
}

// gpuCSVRows are the rows of the CSV's GPU telemetry section: one per GPU
// and field, "Metric (unit)" and AIPerf's STAT_KEYS (a counter's increase
// under avg), then Hostname, Namespace and Pod Name, each only when a GPU
// has it.
func (r Run) gpuCSVRows() (header []string, rows [][]string) {
	header = append([]string{"Endpoint", "GPU_Index", "GPU_Name", "GPU_UUID", "Platform", "Metric"}, csvStatKeys...)
	if r.GPUEndpoints == nil {
		return header, nil
	}
	sums := gputelemetry.Summarise(r.GPUEndpoints.Records, r.GPUEndpoints.Start)
	optional := []struct {
		head string
		of   func(gputelemetry.GPU) string
	}{
		{"Hostname", func(g gputelemetry.GPU) string { return g.Hostname }},
		{"Namespace", func(g gputelemetry.GPU) string { return g.Namespace }},
		{"Pod Name", func(g gputelemetry.GPU) string { return g.Pod }},
	}
	var extra []func(gputelemetry.GPU) string
	for _, o := range optional {
		if slices.ContainsFunc(sums, func(s gputelemetry.Summary) bool { return o.of(s.GPU) != "" }) {
			header = append(header, o.head)
			extra = append(extra, o.of)
		}
	}
	cell := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	for _, s := range sums {
		for _, f := range gputelemetry.Fields {
			st, ok := s.Metrics[f.Key]
			if !ok {
				continue
			}
			row := []string{gputelemetry.Display(s.Source), strconv.Itoa(s.Index), s.ModelName, s.UUID, "nvidia", f.Display + " (" + f.Unit + ")"}
			if f.Counter {
				row = append(row, cell(st.Avg))
				for range csvStatKeys[1:] {
					row = append(row, "")
				}
			} else {
				row = append(row, cell(st.Avg), cell(st.Min), cell(st.Max), cell(st.Sum), cell(st.P1), cell(st.P5), cell(st.P10),
					cell(st.P25), cell(st.P50), cell(st.P75), cell(st.P90), cell(st.P95), cell(st.P99), cell(st.Std))
			}
			for _, of := range extra {
				row = append(row, of(s.GPU))
			}
			rows = append(rows, row)
		}
	}
	return header, rows
}

// ConsoleGPUEndpoints prints, per GPU of the endpoints scraped, its power,
// energy, utilisation and memory over the measured requests; it says so
// when none answered.
func ConsoleGPUEndpoints(w io.Writer, r Run) {
	c := r.GPUEndpoints
	if c == nil {
		return
	}
	if len(c.Records) == 0 {
		fmt.Fprintf(w, "\nGPU telemetry: no readings from %d endpoint(s) (%d reachable); see the log\n", len(c.Configured), len(c.Reachable))
		return
	}
	val := func(st stats.Stats, ok bool, format string) string {
		if !ok {
			return "-"
		}
		return fmt.Sprintf(format, st.Avg)
	}
	fmt.Fprintf(w, "\n%-40s %10s %10s %12s %10s %10s\n", "GPU telemetry (over the run)", "avg W", "peak W", "energy MJ", "avg util%", "avg mem GB")
	for _, s := range gputelemetry.Summarise(c.Records, c.Start) {
		power, hasPower := s.Metrics["nvidia_power_usage"]
		peak := "-"
		if hasPower {
			peak = fmt.Sprintf("%.1f", power.Max)
		}
		energy, hasEnergy := s.Metrics["nvidia_energy_consumption"]
		util, hasUtil := s.Metrics["nvidia_gpu_utilization"]
		mem, hasMem := s.Metrics["nvidia_memory_used"]
		name := fmt.Sprintf("%s gpu %d %s", gputelemetry.Display(s.Source), s.Index, s.ModelName)
		fmt.Fprintf(w, "%-40s %10s %10s %12s %10s %10s\n", name, val(power, hasPower, "%.1f"), peak,
			val(energy, hasEnergy, "%.6f"), val(util, hasUtil, "%.1f"), val(mem, hasMem, "%.2f"))
	}
}
