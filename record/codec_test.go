package record

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestRecordRoundTrip: every field of a Record survives the encoding, so a
// report fed decoded records counts as the process that ran them would.
// A field added to Record without the encoding fails here: each is set.
func TestRecordRoundTrip(t *testing.T) {
	at := time.Date(2026, 12, 2, 4, 0, 0, 123456789, time.UTC)
	rec := &Record{
		Seq: 7, ID: NewRequestID(1, 0x5eed, "a", 7), Run: 0x5eed, Scheduled: at, Sent: at.Add(time.Millisecond), CapWait: 3, ClientPaused: 8,
		Chunks: []time.Duration{5, 9, 20}, FirstOutput: 1, FirstChunkTokens: 2, Duration: 30, Ack: 4,
		Phases:      Phases{Conn: ConnDialled, DNS: 1, Connect: 2, TLS: 3, Setup: 7, Written: 1, FirstByte: 3},
		InputTokens: 11, OutputTokens: 12, UsagePromptTokens: 13, ClientOutputTokens: 14, ReasoningTokens: 1,
		TokenSource: TokensFromTokenizer, PinnedOutputTokens: 12, Encoding: EncodingZstd,
		ConnRetried: true, KeepAliveWithheld: true,
		Outcome: OutcomeError, Reason: ReasonStall, Status: 200, Err: "stalled",
		Digest:       NewDigestEntry(7, 5*time.Second, 11, 12, "hi"),
		PromptTokens: 10, Session: "s1", Body: []byte(`{"x":1}`), Images: 2, AudioSeconds: 1.5, URL: 1,
	}
	v := reflect.ValueOf(rec).Elem()
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("the test leaves Record.%s unset: set it, and encode it", v.Type().Field(i).Name)
		}
	}
	b, err := Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rec) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, rec)
	}
	zero := &Record{FirstOutput: -1}
	if b, err = Marshal(zero); err != nil {
		t.Fatal(err)
	}
	if got, err = Unmarshal(b); err != nil || !reflect.DeepEqual(got, zero) {
		t.Errorf("zero record: %+v, %v", got, err)
	}
}

func TestUnmarshalRefuses(t *testing.T) {
	id := `"id": "` + strings.Repeat("0", 48) + `", `
	for _, tc := range []struct{ in, err string }{
		{`{"id": "00", "outcome": "ok", "token_source": "usage"}`, "id"},
		{`{` + id + `"outcome": "teleported", "token_source": "usage"}`, `outcome: "teleported" is none this version knows`},
		{`{` + id + `"outcome": "ok", "token_source": "usage", "encoding": "lz4"}`, "encoding"},
		{`{` + id + `"outcome": "ok", "token_source": "usage", "phases": {"conn": "pigeon"}}`, "connection"},
		{`{` + id + `"outcome": "ok", "token_source": "usage", "digest": "0a"}`, "digest"},
		{`not json`, "record:"},
	} {
		if _, err := Unmarshal([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Unmarshal(%s) = %v, want an error about %s", tc.in, err, tc.err)
		}
	}
}

// BenchmarkMarshal is what a bench shard's record file costs per
// request: a streamed 256-token response with a 2 KB body.
func BenchmarkMarshal(b *testing.B) {
	rec := &Record{Seq: 7, ID: NewRequestID(1, 1, "a", 7), Scheduled: time.Now(), Sent: time.Now(), FirstOutput: 0,
		Duration: time.Second, InputTokens: 512, OutputTokens: 256, Outcome: OutcomeOK, Status: 200,
		Digest: NewDigestEntry(7, 0, 0, 0, "x"), Body: make([]byte, 2048)}
	for i := range 256 {
		rec.Chunks = append(rec.Chunks, time.Duration(i+1)*3*time.Millisecond)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Marshal(rec); err != nil {
			b.Fatal(err)
		}
	}
}
