package dataset

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// basetenExport is a Baseten trace row as an exporter writes it: required
// columns, extra ones this loader ignores, and the optional ones.
type basetenExport struct {
	Timestamp    int64   `parquet:"timestamp_start_unix_ms"`
	Prompt       string  `parquet:"prompt"`
	InputTokens  int64   `parquet:"input_tokens"`
	OutputTokens int64   `parquet:"output_tokens"`
	TotalHashes  []int64 `parquet:"total_hashes,list"`
	SessionID    *string `parquet:"provided_session_id,optional"`
	BlockSize    *int64  `parquet:"block_size,optional"`
	Canceled     *int64  `parquet:"request_canceled,optional"`
	DurationMs   *int64  `parquet:"duration_e2e_ms,optional"`
	ModelName    string  `parquet:"model_name"`
}

// writeParquet returns rows written as a Parquet file.
func writeParquet[T any](t testing.TB, rows []T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestBaseten(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	sess := "s1"
	data := writeParquet(t, []basetenExport{
		{Timestamp: 1_700_000_000_000, Prompt: "hello there you", InputTokens: 3, OutputTokens: 7, SessionID: &sess, ModelName: "m"},
		{Timestamp: 1_700_000_000_250, InputTokens: 10, OutputTokens: 2, TotalHashes: []int64{5, 6, 7}, BlockSize: i64(4)},
		{Timestamp: 1_700_000_001_000, InputTokens: 6, OutputTokens: 0, TotalHashes: []int64{5, 6}, Canceled: i64(1), DurationMs: i64(800)},
	})
	s, err := load("baseten", "replay", 2, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	ms := time.Millisecond
	want := []item{
		{In: 3, Out: 7, Text: "hello there you", Session: "s1"},
		{At: 125 * ms, In: 10, Out: 2},
		{At: 500 * ms, In: 6, Out: 1, Cancel: 400 * ms},
	}
	var texts []string
	for i, w := range want {
		it, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if got := summarize(it, w.Text != ""); got.At != w.At || got.In != w.In || got.Out != w.Out || got.Text != w.Text || got.Session != w.Session || got.Cancel != w.Cancel {
			t.Errorf("row %d = %+v\nwant %+v", i+1, got, w)
		}
		texts = append(texts, it.Prompt.Text)
	}
	// Rows 2 and 3 share hash ids 5 and 6: 8 tokens of block size 4.
	if a, b := strings.Fields(texts[1]), strings.Fields(texts[2]); strings.Join(a[:6], " ") != strings.Join(b, " ") {
		t.Errorf("rows sharing hash ids do not share their prefix:\n%q\n%q", a, b)
	}
}

func TestBasetenMissingColumn(t *testing.T) {
	type partial struct {
		Timestamp int64  `parquet:"timestamp_start_unix_ms"`
		Prompt    string `parquet:"prompt"`
	}
	_, err := load("baseten", "replay", 1, writeParquet(t, []partial{{Timestamp: 1, Prompt: "x"}}), nil)
	if want := "f: has no column input_tokens; a Baseten trace has [timestamp_start_unix_ms prompt input_tokens output_tokens]"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
