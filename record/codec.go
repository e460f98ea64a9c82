package record

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// recordJSON is the encoding of a Record between processes and machines:
// a bench shard's record file and the records one replica sends another.
// It holds everything a report needs to count the request exactly as the
// process that ran it would have, so the shards of a run merge into the
// report of the run. Enumerations are spelled out, so that a reader of
// another version refuses what it does not know instead of miscounting it.
type recordJSON struct {
	Seq                uint64          `json:"seq"`
	ID                 string          `json:"id"`     // trace and span ID, hex
	Run                string          `json:"run"`    // RunID.String
	Digest             string          `json:"digest"` // the DigestEntry in hex; empty when zero
	Scheduled          time.Time       `json:"scheduled"`
	Sent               time.Time       `json:"sent,omitzero"`
	CapWait            time.Duration   `json:"cap_wait_ns,omitempty"`
	ClientPaused       time.Duration   `json:"client_paused_ns,omitempty"`
	Chunks             []time.Duration `json:"chunks_ns,omitempty"`
	FirstOutput        int             `json:"first_output"`
	FirstChunkTokens   int             `json:"first_chunk_tokens,omitempty"`
	Duration           time.Duration   `json:"duration_ns"`
	Ack                time.Duration   `json:"ack_ns,omitempty"`
	Phases             *phasesJSON     `json:"phases,omitempty"`
	InputTokens        int             `json:"input_tokens,omitempty"`
	OutputTokens       int             `json:"output_tokens,omitempty"`
	UsagePromptTokens  int             `json:"usage_prompt_tokens,omitempty"`
	ClientOutputTokens int             `json:"client_output_tokens,omitempty"`
	ReasoningTokens    int             `json:"reasoning_tokens,omitempty"`
	TokenSource        string          `json:"token_source"`
	PinnedOutputTokens int             `json:"pinned_output_tokens,omitempty"`
	Encoding           string          `json:"encoding,omitempty"`
	ConnRetried        bool            `json:"conn_retried,omitempty"`
	KeepAliveWithheld  bool            `json:"keep_alive_withheld,omitempty"`
	Outcome            string          `json:"outcome"`
	Reason             Reason          `json:"reason,omitempty"`
	Status             int             `json:"status,omitempty"`
	Err                string          `json:"err,omitempty"`
	PromptTokens       int             `json:"prompt_tokens,omitempty"`
	Session            string          `json:"session,omitempty"`
	Body               []byte          `json:"body,omitempty"`
	Images             int             `json:"images,omitempty"`
	AudioSeconds       float64         `json:"audio_seconds,omitempty"`
	URL                int             `json:"url_index,omitempty"`
}

// phasesJSON is Phases, its connection's origin spelled out.
type phasesJSON struct {
	Conn      string        `json:"conn"`
	DNS       time.Duration `json:"dns_ns,omitempty"`
	Connect   time.Duration `json:"connect_ns,omitempty"`
	TLS       time.Duration `json:"tls_ns,omitempty"`
	Setup     time.Duration `json:"setup_ns,omitempty"`
	Written   time.Duration `json:"written_ns,omitempty"`
	FirstByte time.Duration `json:"first_byte_ns,omitempty"`
}

// Marshal encodes rec, whole, as one line of JSON (no newline).
func Marshal(rec *Record) ([]byte, error) {
	j := recordJSON{
		Seq: rec.Seq, ID: hex.EncodeToString(rec.ID.Trace[:]) + hex.EncodeToString(rec.ID.Span[:]), Run: rec.Run.String(),
		Scheduled: rec.Scheduled, Sent: rec.Sent, CapWait: rec.CapWait, ClientPaused: rec.ClientPaused,
		Chunks: rec.Chunks, FirstOutput: rec.FirstOutput, FirstChunkTokens: rec.FirstChunkTokens,
		Duration: rec.Duration, Ack: rec.Ack,
		InputTokens: rec.InputTokens, OutputTokens: rec.OutputTokens, UsagePromptTokens: rec.UsagePromptTokens,
		ClientOutputTokens: rec.ClientOutputTokens, ReasoningTokens: rec.ReasoningTokens,
		TokenSource: rec.TokenSource.String(), PinnedOutputTokens: rec.PinnedOutputTokens,
		ConnRetried: rec.ConnRetried, KeepAliveWithheld: rec.KeepAliveWithheld,
		Outcome: rec.Outcome.String(), Reason: rec.Reason, Status: rec.Status, Err: rec.Err,
		PromptTokens: rec.PromptTokens, Session: rec.Session, Body: rec.Body,
		Images: rec.Images, AudioSeconds: rec.AudioSeconds, URL: rec.URL,
	}
	if ph := rec.Phases; ph != (Phases{}) {
		j.Phases = &phasesJSON{Conn: ph.Conn.String(), DNS: ph.DNS, Connect: ph.Connect, TLS: ph.TLS,
			Setup: ph.Setup, Written: ph.Written, FirstByte: ph.FirstByte}
	}
	if rec.Digest.Folded() {
		j.Digest = hex.EncodeToString(rec.Digest[:])
	}
	if rec.Encoding != EncodingIdentity {
		j.Encoding = rec.Encoding.String()
	}
	return json.Marshal(&j)
}

// Unmarshal decodes what Marshal encoded.
func Unmarshal(b []byte) (*Record, error) {
	var j recordJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	rec := &Record{
		Seq: j.Seq, Scheduled: j.Scheduled, Sent: j.Sent, CapWait: j.CapWait, ClientPaused: j.ClientPaused,
		Chunks: j.Chunks, FirstOutput: j.FirstOutput, FirstChunkTokens: j.FirstChunkTokens,
		Duration: j.Duration, Ack: j.Ack,
		InputTokens: j.InputTokens, OutputTokens: j.OutputTokens, UsagePromptTokens: j.UsagePromptTokens,
		ClientOutputTokens: j.ClientOutputTokens, ReasoningTokens: j.ReasoningTokens,
		PinnedOutputTokens: j.PinnedOutputTokens,
		ConnRetried:        j.ConnRetried, KeepAliveWithheld: j.KeepAliveWithheld,
		Reason: j.Reason, Status: j.Status, Err: j.Err,
		PromptTokens: j.PromptTokens, Session: j.Session, Body: j.Body,
		Images: j.Images, AudioSeconds: j.AudioSeconds, URL: j.URL,
	}
	var err error
	if err = decodeHex(j.ID, rec.ID.Trace[:], rec.ID.Span[:]); err != nil {
		return nil, fmt.Errorf("record %d: id %q: %w", j.Seq, j.ID, err)
	}
	if j.Run != "" { // older shard files have none
		if rec.Run, err = ParseRunID(j.Run); err != nil {
			return nil, fmt.Errorf("record %d: run %q: %w", j.Seq, j.Run, err)
		}
	}
	if j.Digest != "" {
		if err = decodeHex(j.Digest, rec.Digest[:]); err != nil {
			return nil, fmt.Errorf("record %d: digest %q: %w", j.Seq, j.Digest, err)
		}
	}
	if rec.Outcome, err = parseEnum(j.Outcome, []Outcome{OutcomeOK, OutcomeError, OutcomeCancelled}); err != nil {
		return nil, fmt.Errorf("record %d: outcome: %w", j.Seq, err)
	}
	if rec.TokenSource, err = parseEnum(j.TokenSource, []TokenSource{TokensFromUsage, TokensFromChunks, TokensFromTokenizer}); err != nil {
		return nil, fmt.Errorf("record %d: token source: %w", j.Seq, err)
	}
	if ph := j.Phases; ph != nil {
		rec.Phases = Phases{DNS: ph.DNS, Connect: ph.Connect, TLS: ph.TLS, Setup: ph.Setup, Written: ph.Written, FirstByte: ph.FirstByte}
		if rec.Phases.Conn, err = parseEnum(ph.Conn, []ConnOrigin{ConnNone, ConnDialled, ConnReused, ConnOpenedAhead}); err != nil {
			return nil, fmt.Errorf("record %d: connection: %w", j.Seq, err)
		}
	}
	if j.Encoding != "" {
		if rec.Encoding, err = parseEnum(j.Encoding, Encodings); err != nil {
			return nil, fmt.Errorf("record %d: encoding: %w", j.Seq, err)
		}
	}
	return rec, nil
}

// decodeHex fills parts, in order, from the hex digits of s, which must
// fill them exactly.
func decodeHex(s string, parts ...[]byte) error {
	b, err := hex.DecodeString(s)
	if err != nil {
		return err
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if len(b) != n {
		return fmt.Errorf("%d bytes, want %d", len(b), n)
	}
	for _, p := range parts {
		b = b[copy(p, b):]
	}
	return nil
}

// parseEnum is the value of values whose String is s.
func parseEnum[E fmt.Stringer](s string, values []E) (E, error) {
	for _, v := range values {
		if v.String() == s {
			return v, nil
		}
	}
	var zero E
	return zero, fmt.Errorf("%q is none this version knows: was the file written by a newer inferprobe?", s)
}
