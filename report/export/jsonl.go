package export

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
)

// Who sent and recorded the requests, in AIPerf's worker_id and
// record_processor_id: one client, whichever of its worker processes sent
// a request.
const (
	workerID          = "worker_inferprobe"
	recordProcessorID = "record_processor_inferprobe"
)

// WriteJSONL writes profile_export.jsonl: one line per request in AIPerf
// 0.13's MetricRecordInfo shape ({"metadata", "metrics", "error"}), metrics
// as {value, unit} in AIPerf's units, and inferprobe's own per-request
// figures (schedule lag, concurrency wait, connection, token source; with
// several URLs, AIPerf's url_index, which its export leaves out) under
// "inferprobe".
func WriteJSONL(w io.Writer, r Run) error {
	bw := bufio.NewWriter(w)
	convs := conversations(r.Requests)
	for i, q := range r.Requests {
		b, err := requestLine(q, r.Config.Seed, convs[i], r.SLO != (report.SLO{}), len(r.Config.URLs) > 1).MarshalJSON()
		if err != nil {
			return err
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// conversation places a request in its multi-turn session: AIPerf's
// conversation_id (the session id of inputs.json), turn_index, and
// session_num (the session's index in the run; for single requests, the
// request's).
type conversation struct {
	id        string
	turn, num int
}

// conversations places each of reqs, which are in sequence order: a
// request of no session is a conversation of its own, named as AIPerf names
// its sessions.
func conversations(reqs []report.RequestRecord) []conversation {
	out := make([]conversation, len(reqs))
	turns, nums := map[string]int{}, map[string]int{}
	for i, q := range reqs {
		id := q.Session
		if id == "" {
			id = fmt.Sprintf("session_%06d", q.Seq)
		}
		num, ok := nums[id]
		if !ok {
			num = len(nums)
			nums[id] = num
		}
		out[i] = conversation{id: id, turn: turns[id], num: num}
		turns[id]++
	}
	return out
}

// requestID derives a UUID-shaped id (version 4 layout) from the seed, the
// kind of id and what it names, so that the same seed gives the same ids.
func requestID(seed uint64, kind, name string) string {
	h := sha256.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	fmt.Fprintf(h, "/%s/%s", kind, name)
	u := h.Sum(nil)[:16]
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// CorrelationID is the x_correlation_id of conversation conv in a run with
// seed; a request's x_request_id is the ID it was sent with (Record.ID).
func CorrelationID(seed uint64, conv string) string {
	return requestID(seed, "correlation", conv)
}

// requestLine is q's line; withSLO says the run judged requests against an
// SLO, without which AIPerf has no good_request_count, and severalURLs that
// its sessions took turns among several URLs.
func requestLine(q report.RequestRecord, seed uint64, conv conversation, withSLO, severalURLs bool) obj {
	val := func(v any, unit string) obj { return obj{{"value", v}, {"unit", unit}} }
	msOf := func(d time.Duration) float64 { return d.Seconds() * ms }
	// A request never sent starts and ends at its scheduled time: AIPerf's
	// model requires both.
	start := q.Scheduled
	if !q.Sent.IsZero() {
		start = q.Sent
	}
	end := start.Add(q.Duration)
	xCorrelation := CorrelationID(seed, conv.id)
	meta := obj{
		{"session_num", conv.num},
		{"x_request_id", q.ID.String()},
		{"x_correlation_id", xCorrelation},
		{"conversation_id", conv.id},
		{"turn_index", conv.turn},
		{"credit_issued_ns", q.Scheduled.UnixNano()},
		{"request_start_ns", start.UnixNano()},
	}
	if q.Ack > 0 {
		meta = append(meta, kv{"request_ack_ns", start.Add(q.Ack).UnixNano()})
	}
	meta = append(meta,
		kv{"request_end_ns", end.UnixNano()},
		kv{"worker_id", workerID},
		kv{"record_processor_id", recordProcessorID},
		kv{"benchmark_phase", "profiling"},
		kv{"phase_index", 0},
		kv{"profiling_index", 0},
		kv{"phase_name", "profiling"},
		kv{"phase_kind", "profiling"},
		kv{"was_cancelled", q.Outcome == record.OutcomeCancelled},
	)
	if q.Outcome == record.OutcomeCancelled {
		meta = append(meta, kv{"cancellation_time_ns", end.UnixNano()})
	}
	meta = append(meta, kv{"context_overflow_skip", false}, kv{"agent_depth", 0}, kv{"root_correlation_id", xCorrelation})

	metrics := obj{}
	add := func(tag string, v any, unit string) { metrics = append(metrics, kv{tag, val(v, unit)}) }
	if len(q.Gaps) > 0 {
		add("inter_chunk_latency", q.Gaps, "ms")
	}
	if q.HasTTFT {
		add("time_to_first_token", msOf(q.TTFT), "ms")
	}
	ok := q.Outcome == record.OutcomeOK
	if ok {
		add("request_latency", msOf(q.Duration), "ms")
		if n, has := q.UsageTotalTokens(); has {
			add("usage_total_tokens", n, "tokens")
		}
		add("input_sequence_length", q.ClientInputTokens(), "tokens")
		add("output_token_count", q.OutputTokenCount(), "tokens")
		if q.ReasoningTokens > 0 {
			add("reasoning_token_count", q.ReasoningTokens, "tokens")
		}
		add("output_sequence_length", q.OutputTokens, "tokens")
		if q.UsagePromptTokens > 0 {
			add("usage_prompt_tokens", q.UsagePromptTokens, "tokens")
		}
		if n, has := q.UsageCompletionTokens(); has {
			add("usage_completion_tokens", n, "tokens")
		}
	}
	if q.HasTTST {
		add("time_to_second_token", msOf(q.TTST), "ms")
	}
	if q.HasTTFOT {
		add("time_to_first_output_token", msOf(q.TTFOT), "ms")
	}
	if ok {
		if d, has := q.DecodeDuration(); has {
			add("decode_duration", msOf(d), "ms")
		}
		if v, has := q.PrefillThroughputPerUser(); has {
			add("prefill_throughput_per_user", v, "tokens/sec/user")
		}
		if v, has := q.OSLMismatchDiffPct(); has {
			add("osl_mismatch_diff_pct", v, "%")
		}
		if v, has := q.E2EOutputThroughput(); has {
			add("e2e_output_token_throughput", v, "tokens/sec/user")
		}
		if q.ITL > 0 {
			add("inter_token_latency", msOf(q.ITL), "ms")
		}
		if v, has := q.UsagePromptDiffPct(); has {
			add("usage_prompt_tokens_diff_pct", v, "%")
		}
		if v, has := q.UsageCompletionDiffPct(); has {
			add("usage_completion_tokens_diff_pct", v, "%")
		}
		if q.Images > 0 {
			add("num_images", q.Images, "images")
		}
		if v, has := q.ImageThroughput(); has {
			add("image_throughput", v, "images/sec")
		}
		if v, has := q.ImageLatency(); has {
			add("image_latency", v*ms, "ms/image")
		}
		if q.AudioSeconds > 0 {
			add("audio_duration", q.AudioSeconds, "sec")
		}
		if v, has := q.RTFx(); has {
			add("rtfx", v, "ratio")
		}
		if withSLO {
			good := 0
			if q.Good {
				good = 1
			}
			add("good_request_count", good, "requests")
		}
		if q.ITL > 0 {
			add("output_token_throughput_per_user", 1/q.ITL.Seconds(), "tokens/sec/user")
		}
	}
	if q.HasLag {
		add("credit_to_start_latency", msOf(q.Sent.Sub(q.Scheduled)), "ms")
	}
	ph := &q.Phases
	if h, ok := q.HTTPTrace(); ok {
		// AIPerf writes its HTTP trace metrics for every request.
		reused := 0
		if h.Reused {
			reused = 1
		}
		add("http_req_blocked", msOf(h.Blocked), "ms")
		add("http_req_dns_lookup", msOf(h.DNSLookup), "ms")
		add("http_req_connecting", msOf(h.Connecting), "ms")
		add("http_req_connection_reused", reused, "ratio")
		add("http_req_connection_overhead", msOf(h.ConnectionOverhead), "ms")
		if h.HasSending {
			add("http_req_sending", msOf(h.Sending), "ms")
		}
		if h.HasResponse {
			add("http_req_waiting", msOf(h.Waiting), "ms")
			add("http_req_receiving", msOf(h.Receiving), "ms")
			add("http_req_duration", msOf(h.Duration), "ms")
			add("http_req_total", msOf(h.Total), "ms")
		}
	}

	// What regenerates x_request_id with the seed and the probe's name
	// (record.NewRequestID).
	extras := obj{{"run_id", q.Run.String()}, {"request_index", q.Seq}, {"scheduled_ns", q.Scheduled.UnixNano()}}
	if severalURLs {
		extras = append(extras, kv{"url_index", q.URL})
	}
	if q.HasLag {
		extras = append(extras, kv{"schedule_lag_ms", msOf(q.Lag)})
	}
	extras = append(extras, kv{"concurrency_wait_ms", msOf(q.CapWait)})
	if q.ClientPaused > 0 {
		// Left out of the statistics: its timings are the client's pause.
		extras = append(extras, kv{"client_paused_ms", msOf(q.ClientPaused)})
	}
	if ph.Conn != record.ConnNone {
		// What AIPerf's metrics merge or lack: where the connection came
		// from (a reused or opened-ahead one had no setup for this
		// request), its TLS handshake apart, and the first byte.
		extras = append(extras, kv{"connection", ph.Conn.String()}, kv{"tls_handshake_ms", msOf(ph.TLS)})
		if ph.FirstByte > 0 {
			extras = append(extras, kv{"first_byte_ms", msOf(ph.FirstByte)})
		}
	}
	if ok {
		extras = append(extras, kv{"token_source", q.TokenSource.String()}, kv{"good", q.Good})
	}
	line := obj{{"metadata", meta}, {"metrics", metrics}}
	if !ok {
		reason := string(q.Reason)
		if q.Outcome == record.OutcomeCancelled {
			reason = "cancelled"
		}
		line = append(line, kv{"error", obj{{"code", q.Status}, {"type", reason}, {"message", q.Err}}})
	}
	return append(line, kv{"inferprobe", extras})
}
