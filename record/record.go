// Package record is the vocabulary of a measured request: the Record of
// one request and its parts (Outcome, Reason, Phases, RequestID), the
// digest that identifies the requests a probe sent, a replica's Shard, and
// the JSON encoding of records in shard files and between replicas.
// Everything that reads records (reports, collectors, dashboards) imports
// it and nothing else of the request path, so it imports nothing of the
// module.
package record

import "time"

// Outcome is how a request ended.
type Outcome uint8

const (
	OutcomeOK Outcome = iota
	OutcomeError
	OutcomeCancelled
)

func (o Outcome) String() string {
	switch o {
	case OutcomeOK:
		return "ok"
	case OutcomeCancelled:
		return "cancelled"
	default:
		return "error"
	}
}

// Reason classifies a failed request. The set is bounded: it becomes a label.
type Reason string

const (
	ReasonNone             Reason = ""
	ReasonConnect          Reason = "connect"            // dial, DNS or TLS failure
	ReasonTimeout          Reason = "timeout"            // the whole-request timeout expired
	ReasonStall            Reason = "stall"              // silence between chunks exceeded stall_timeout
	ReasonHTTP4xx          Reason = "http_4xx"           // a 4xx status other than 429
	ReasonHTTP429          Reason = "http_429"           // rate limited
	ReasonHTTP5xx          Reason = "http_5xx"           // a 5xx status
	ReasonProtocol         Reason = "protocol"           // a body or event we could not understand
	ReasonTruncated        Reason = "truncated"          // the stream ended before its terminator
	ReasonServerErrorEvent Reason = "server_error_event" // the server sent an error inside the stream
	ReasonWorkerLost       Reason = "worker_lost"        // the process running the request died
	ReasonDataset          Reason = "dataset"            // the dataset could not produce the request; the probe stops
)

// Reasons are the reasons a failed request can have, every one but ReasonNone: those not a
// ClientLoss are the values of the error counter's reason label, exported from 0 so that a
// rate counts a series' first failure.
var Reasons = []Reason{
	ReasonConnect, ReasonTimeout, ReasonStall, ReasonHTTP4xx, ReasonHTTP429, ReasonHTTP5xx,
	ReasonProtocol, ReasonTruncated, ReasonServerErrorEvent, ReasonWorkerLost, ReasonDataset,
}

// ClientLoss reports whether a failure for reason r is the client's loss,
// not the target's failure: the worker holding the request died or was
// killed as stuck. It is counted apart (outcome "lost" on /metrics, a
// report's client_lost), never in a target's errors.
func (r Reason) ClientLoss() bool { return r == ReasonWorkerLost }

// TokenSource says where a record's token counts came from.
type TokenSource uint8

const (
	TokensFromUsage     TokenSource = iota // the server's usage object
	TokensFromChunks                       // one token per content chunk, or for embeddings and rankings the dataset's input length: an estimate
	TokensFromTokenizer                    // the target's tokenizer on the received text

	// NumTokenSources is how many sources there are; it stays last.
	NumTokenSources = int(iota)
)

func (s TokenSource) String() string {
	switch s {
	case TokensFromUsage:
		return "usage"
	case TokensFromTokenizer:
		return "tokenizer"
	}
	return "chunks"
}

// Record is everything measured about one request. Times are offsets from Sent,
// the instant just before the request was written to the connection.
type Record struct {
	Seq uint64
	// ID is the request's identity (NewRequestID), sent in its ID headers
	// unless the target turned them off, and the key that joins the record
	// with the server's logs and traces and with an exemplar.
	ID RequestID
	// Run is the run whose ID ID folds in (NewRequestID), set by the
	// parent's scheduler: with the seed, the probe's name and Seq it
	// regenerates ID.
	Run       RunID
	Scheduled time.Time // when the scheduler wanted it sent
	Sent      time.Time // the time origin of the request
	// CapWait is how long the request was held past Scheduled by
	// max_concurrency, waiting for a request ahead of it to finish: the
	// configured cap at work, not the client or the server.
	CapWait time.Duration
	// ClientPaused is how long, while the request was due or in flight,
	// the client's processes did not run for more than a threshold at a
	// time (stopped, throttled by a CPU quota, a VM paused): its timings
	// then measure the client, not the server, and it is left out of the
	// statistics. Each process adds its own pauses (the worker's and the
	// parent's watchdogs).
	ClientPaused time.Duration

	// Chunks holds the arrival offset of every content chunk, in order.
	Chunks []time.Duration
	// FirstOutput is the index in Chunks of the first chunk with
	// non-reasoning content, or -1.
	FirstOutput int
	// FirstChunkTokens is the number of tokens in the first content chunk when
	// known: from per-chunk usage, or from the target's tokenizer; 0 when
	// unknown.
	FirstChunkTokens int
	// Duration is the offset of the end of the response.
	Duration time.Duration
	// Ack is the offset at which the response's status and headers came
	// (AIPerf's request_ack); 0 without a response.
	Ack time.Duration
	// Phases is the request's way to the server: its connection's setup
	// and the offsets of the request written and of the response's first
	// byte.
	Phases Phases

	// InputTokens is the prompt length the measurements use: the server's
	// usage when it counted the prompt, else PromptTokens.
	InputTokens  int
	OutputTokens int
	// UsagePromptTokens is the server's own count of the prompt (usage), 0
	// when it gave none; it includes the chat template, which the client's
	// count (PromptTokens) does not.
	UsagePromptTokens int
	// ClientOutputTokens is the target's tokenizer's count of the output
	// when the server's usage gave OutputTokens: the client's count AIPerf
	// compares usage with. 0 without a tokenizer or without usage.
	ClientOutputTokens int
	// ReasoningTokens is the part of OutputTokens spent on reasoning, when
	// the server's usage says (completion_tokens_details.reasoning_tokens);
	// 0 when it does not.
	ReasoningTokens int
	TokenSource     TokenSource
	// PinnedOutputTokens is the output length the request pinned with
	// ignore_eos or min_tokens == max_tokens; 0 when not pinned.
	PinnedOutputTokens int

	// Encoding is the reply's Content-Encoding: identity unless a server
	// or proxy compressed it unasked (it is decoded).
	Encoding Encoding
	// ConnRetried is set when the first attempt went out on a reused
	// connection that the server had already closed, provably never reached
	// it, and the request was sent again on a fresh connection: the record
	// is the second attempt's.
	ConnRetried bool
	// KeepAliveWithheld is set when the target keeps connections alive but
	// the request went out on a connection of its own, as its server was
	// seen to close connections right after its responses (prober/conn.go).
	// The few that go out on their own while a server's keep-alive is still
	// being learnt are not: that says nothing of the server.
	KeepAliveWithheld bool

	Outcome Outcome
	Reason  Reason
	// Status is the HTTP status code, 0 when no response arrived.
	Status int
	// Err describes the failure for logs; never a label.
	Err string

	// Digest is what the request folded into its probe's digest, set by
	// the scheduler in this process (the parent has it); zero for a record
	// of a request never sent (a dataset that could not go on).
	Digest DigestEntry

	// What was sent, set by the sender in this process (never carried by
	// the wire: the parent has the request): the client's count of the
	// prompt (prober.Request.InputTokens), the session, the body and its
	// media, for the artifacts of a finite run.
	PromptTokens int
	Session      string
	Body         []byte
	// Images is the number of images the request carried, and AudioSeconds
	// the duration of its first audio clip (AIPerf's audio_duration); 0 for
	// none.
	Images       int
	AudioSeconds float64
	// URL is which of the target's several base URLs the request went to
	// (AIPerf's url_index of several --url), set by the sender as Session
	// is; 0 with one.
	URL int
}

// Unsent is the record of request seq, identified by id and scheduled at
// scheduled, that was never sent or whose answer never came back (the
// dataset could not make it, the probe or its worker went away): it ended
// in outcome for reason, and err says why. Its Sent stays zero, so it adds
// no schedule lag (HasLag in package report) and no span to the run: the
// instant it would have been sent is not known, any instant put there would
// be a guess, and one before scheduled (a credit reaches its worker ahead of
// it) a negative lag. It has no chunks, so no first output (-1).
func Unsent(seq uint64, id RequestID, scheduled time.Time, outcome Outcome, reason Reason, err string) *Record {
	return &Record{Seq: seq, ID: id, Scheduled: scheduled, FirstOutput: -1, Outcome: outcome, Reason: reason, Err: err}
}

// Lag is how late the client sent the request: the actual send minus the
// scheduled send, less the time the concurrency cap held it and the time
// the network took to set up a connection dialled for it (Phases). What is
// left is the client's own delay, so lag measures the client, CapWait the
// cap and Phases the network.
func (r *Record) Lag() time.Duration {
	return r.Sent.Sub(r.Scheduled) - r.CapWait - r.Phases.Network()
}

// TTFT is the time to the first content chunk; ok is false without one.
func (r *Record) TTFT() (d time.Duration, ok bool) {
	if len(r.Chunks) == 0 {
		return 0, false
	}
	return r.Chunks[0], true
}

// TTFOT is the time to the first non-reasoning content chunk.
func (r *Record) TTFOT() (d time.Duration, ok bool) {
	if r.FirstOutput < 0 || r.FirstOutput >= len(r.Chunks) {
		return 0, false
	}
	return r.Chunks[r.FirstOutput], true
}

// TTST is the time from the first to the second content chunk.
func (r *Record) TTST() (d time.Duration, ok bool) {
	if len(r.Chunks) < 2 {
		return 0, false
	}
	return r.Chunks[1] - r.Chunks[0], true
}

// ITL is the inter-token latency: the time between the first and last content
// chunks divided by the tokens generated after the first chunk. Tokens in the
// first chunk come from per-chunk usage or the tokenizer when known, else
// output tokens are taken as spread evenly over the chunks.
func (r *Record) ITL() (d time.Duration, ok bool) {
	n := len(r.Chunks)
	if n < 2 || r.OutputTokens <= 0 {
		return 0, false
	}
	span := float64(r.Chunks[n-1] - r.Chunks[0])
	var after float64
	if r.FirstChunkTokens > 0 {
		after = float64(r.OutputTokens - r.FirstChunkTokens)
	} else {
		after = float64(r.OutputTokens) * float64(n-1) / float64(n)
	}
	if after <= 0 {
		return 0, false
	}
	return time.Duration(span / after), true
}
