package prober

import (
	"bytes"
	"encoding/json"
	"testing"
)

// chunkSeeds are stream chunks as servers send them, and inputs at the edges
// of what the scanner handles itself.
var chunkSeeds = []string{
	// vLLM chat: prelude, content, reasoning, finish, usage
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"reasoning_content":"hmm"},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"reasoning":"hmm","content":null},"finish_reason":null}]}`,
	`{"id":"chatcmpl-1","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"length","stop_reason":null}]}`,
	`{"id":"chatcmpl-1","choices":[],"usage":{"prompt_tokens":128,"total_tokens":192,"completion_tokens":64}}`,
	// reasoning models: OpenAI's and vLLM's usage details
	`{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":300,"total_tokens":309,"prompt_tokens_details":null,"completion_tokens_details":{"reasoning_tokens":256,"accepted_prediction_tokens":0}}}`,
	// per-chunk usage (vLLM continuous_usage_stats), completions, SGLang/TGI extras
	`{"choices":[{"index":0,"delta":{"content":"ab"}}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`,
	`{"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":" word","logprobs":null,"finish_reason":null}],"usage":null}`,
	// completions with reasoning: on the choice, beside an empty text
	`{"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":"","reasoning_content":"hmm","logprobs":null,"finish_reason":null}]}`,
	`{"id":"cmpl-1","choices":[{"index":0,"text":"","reasoning":"hmm","finish_reason":null}]}`,
	`{"choices":[{"index":0,"text":"","finish_reason":"stop","matched_stop":2}],"system_fingerprint":"x","usage":{"prompt_tokens":1,"completion_tokens":0,"prompt_tokens_details":{"cached_tokens":0}}}`,
	`{"choices":[{"delta":{"content":"a","tool_calls":[{"index":0,"function":{"arguments":"{\"x\":1.5e-3}"}}]}},null,{"text":"b"}]}`,
	// errors inside the stream
	`{"error":{"message":"boom","type":"server_error","code":500}}`,
	`{"error":null,"choices":[{"delta":{"content":"x"}}]}`,
	`{"error":"overloaded"}`,
	// escapes and Unicode in values, whitespace
	` { "choices" : [ { "delta" : { "content" : "\u00e9\n\"" } } ] } `,
	`{"choices":[{"delta":{"content":"日本語"}}]}`,
	`{"choices":[{"delta":{"content":"\ud800"}}]}`,
	// handed to encoding/json: case-folded and escaped keys, duplicates,
	// type errors, fractional tokens, invalid JSON, other top-level values
	`{"Choices":[{"Delta":{"Content":"x"}}],"USAGE":{"Completion_Tokens":3}}`,
	`{"choi\u0063es":[{"delta":{"content":"x"}}]}`,
	`{"choice\u017f":[{"delta":{"content":"x"}}]}`,
	`{"choices":[{"delta":{"content":"x"}}],"choices":[{"index":0}]}`,
	`{"choices":[{"delta":{"content":"x","content":""}}]}`,
	`{"usage":{"completion_tokens":3},"usage":{"prompt_tokens":2}}`,
	`{"choices":{}}`,
	`{"choices":[{"delta":{"content":5}}]}`,
	`{"choices":[{"finish_reason":true}]}`,
	`{"choices":["x"]}`,
	`{"usage":{"completion_tokens":3.0}}`,
	`{"usage":{"completion_tokens":1e2}}`,
	`{"usage":{"completion_tokens":"3"}}`,
	`{"usage":{"completion_tokens":-0,"prompt_tokens":null}}`,
	`{"usage":{"completion_tokens":99999999999999999999}}`,
	`{"usage":[]}`,
	`{"usage":{"completion_tokens_details":null}}`,
	`{"usage":{"completion_tokens_details":{"reasoning_tokens":"7"}}}`,
	`{"usage":{"completion_tokens_details":[]}}`,
	`{"usage":{"completion_tokens_details":{"reasoning_tokens":1,"reasoning_tokens":2}}}`,
	`{"usage":{"completion_tokens_details":{"x":{"y":[1,{"z":null}]},"reasoning_tokens":3}}}`,
	`{"choices":[{"delta":{"content":"x"}}]`,
	`{"choices":[{"delta":{"content":"x"}},]}`,
	`{"choices":[{"delta":{"content":"x\q"}}]}`,
	"{\"choices\":[{\"delta\":{\"content\":\"a\tb\"}}]}",
	`{"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
	`{"a":01}`,
	`{"a":-}`,
	`{"a":tru}`,
	`{} x`,
	`null`,
	`[]`,
	`"x"`,
	``,
	`[DONE]`,
}

// reference decodes data the way the prober did before decodeChunk: with
// encoding/json into a chunk.
func reference(data []byte) (chunkInfo, error) {
	var c chunk
	c.reset()
	if err := json.Unmarshal(data, &c); err != nil {
		return chunkInfo{}, err
	}
	info := chunkInfo{errValue: c.Error}
	info.output, info.reasoning = c.content()
	info.finished = c.finished()
	if c.Usage != nil {
		info.hasUsage, info.usage = true, *c.Usage
	}
	return info, nil
}

// checkChunk fails t unless decodeChunk, and the scanner whenever it takes
// data itself, agree with encoding/json on data.
func checkChunk(t *testing.T, data []byte) (scanned bool) {
	t.Helper()
	want, wantErr := reference(data)
	var fast chunkInfo
	s := chunkScanner{b: data}
	if scanned = s.chunk(&fast); scanned {
		if wantErr != nil {
			t.Fatalf("scanner took %q, which encoding/json refuses: %v", data, wantErr)
		}
		if !sameInfo(fast, want) {
			t.Fatalf("scanner decoded %q as %+v, encoding/json as %+v", data, fast, want)
		}
	}
	var got chunkInfo
	var fb chunk
	err := decodeChunk(data, &fb, &got)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("decodeChunk(%q) = error %v, encoding/json %v", data, err, wantErr)
	}
	if !sameInfo(got, want) {
		t.Fatalf("decodeChunk(%q) = %+v, encoding/json %+v", data, got, want)
	}
	return scanned
}

func sameInfo(a, b chunkInfo) bool {
	return a.output == b.output && a.reasoning == b.reasoning && a.finished == b.finished &&
		a.hasUsage == b.hasUsage && a.usage == b.usage && bytes.Equal(a.errValue, b.errValue) &&
		hasError(a.errValue) == hasError(b.errValue)
}

func TestDecodeChunk(t *testing.T) {
	for _, seed := range chunkSeeds {
		checkChunk(t, []byte(seed))
	}
	// What servers send must take the fast path: a fallback here is a
	// performance bug, not a wrong answer.
	for _, seed := range chunkSeeds[:19] {
		if s := (chunkScanner{b: []byte(seed)}); !s.chunk(&chunkInfo{}) {
			t.Errorf("the scanner handed %s to encoding/json", seed)
		}
	}
}

// FuzzDecodeChunk checks decodeChunk against encoding/json on any input.
func FuzzDecodeChunk(f *testing.F) {
	for _, seed := range chunkSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkChunk(t, data)
	})
}
