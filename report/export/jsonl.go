package export

import (
	"bufio"
	"io"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/report"
)

// WriteJSONL writes profile_export.jsonl: one line per request in AIPerf's
// record shape ({"metadata", "metrics", "error"}), metrics as {value, unit}
// in ms and tokens, plus inferprobe's scheduled send time and schedule lag.
func WriteJSONL(w io.Writer, r Run) error {
	bw := bufio.NewWriter(w)
	for _, q := range r.Requests {
		b, err := requestLine(q).MarshalJSON()
		if err != nil {
			return err
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

func requestLine(q report.RequestRecord) obj {
	val := func(v float64, unit string) obj { return obj{{"value", v}, {"unit", unit}} }
	msOf := func(d interface{ Seconds() float64 }) float64 { return d.Seconds() * ms }
	var start, end any
	if !q.Sent.IsZero() {
		start = q.Sent.UnixNano()
		if q.Duration > 0 { // failures too, as AIPerf records them
			end = q.Sent.Add(q.Duration).UnixNano()
		}
	}
	meta := obj{
		{"session_num", q.Seq},
		{"x_request_id", q.ID.String()},
		{"turn_index", 0},
		{"request_start_ns", start},
		{"request_end_ns", end},
		{"benchmark_phase", "profiling"},
		{"was_cancelled", q.Outcome == prober.OutcomeCancelled},
		{"scheduled_ns", q.Scheduled.UnixNano()},
	}
	metrics := obj{}
	if q.HasLag {
		metrics = append(metrics, kv{"schedule_lag", val(msOf(q.Lag), "ms")})
	}
	if q.HasTTFT {
		metrics = append(metrics, kv{"time_to_first_token", val(msOf(q.TTFT), "ms")})
	}
	if q.HasTTFOT {
		metrics = append(metrics, kv{"time_to_first_output_token", val(msOf(q.TTFOT), "ms")})
	}
	if q.HasTTST {
		metrics = append(metrics, kv{"time_to_second_token", val(msOf(q.TTST), "ms")})
	}
	var errObj any
	if q.Outcome == prober.OutcomeOK {
		metrics = append(metrics,
			kv{"request_latency", val(msOf(q.Duration), "ms")},
			kv{"input_sequence_length", val(float64(q.InputTokens), "tokens")},
			kv{"output_sequence_length", val(float64(q.OutputTokens), "tokens")})
		if q.ITL > 0 {
			metrics = append(metrics,
				kv{"inter_token_latency", val(msOf(q.ITL), "ms")},
				kv{"output_token_throughput_per_user", val(1/q.ITL.Seconds(), "tokens/sec/user")})
		}
		meta = append(meta, kv{"good", q.Good})
	} else {
		reason := string(q.Reason)
		if q.Outcome == prober.OutcomeCancelled {
			reason = "cancelled"
		}
		errObj = obj{{"code", q.Status}, {"type", reason}, {"message", q.Err}}
	}
	return obj{{"metadata", meta}, {"metrics", metrics}, {"error", errObj}}
}
