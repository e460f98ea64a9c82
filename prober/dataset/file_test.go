package dataset

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/scenarios"
)

// TestTokenizerCounts checks counts against known GPT-2 values, and that
// text built for n tokens is n tokens.
func TestTokenizerCounts(t *testing.T) {
	tok := gpt2(t)
	for _, tc := range []struct {
		text string
		want int
	}{
		{"Hello world", 2},
		{"The quick brown fox jumps over the lazy dog.", 10},
		{" the of and", 3},
	} {
		if got := tok.Count(tc.text); got != tc.want {
			t.Errorf("Count(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
	text, err := NewText(tok)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d of %d corpus words are single GPT-2 tokens alone and after a space", len(text.words), len(words))
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 17, 512, 4000} {
		if got := tok.Count(text.Words(rng, n)); got != n {
			t.Errorf("Words(%d) is %d tokens", n, got)
		}
		if got := tok.Count(text.Blocks(1, 0, []uint64{7, 8, 9}, 5, n, rng)); got != n {
			t.Errorf("Blocks for %d tokens is %d tokens", n, got)
		}
	}
	src, err := New(scenarios.Dataset{Synthetic: &scenarios.Synthetic{
		InputTokens:  scenarios.Lengths{Mean: 300, Stddev: 100},
		OutputTokens: scenarios.Lengths{Mean: 8},
	}}, Options{Seed: 3, Component: "p", Tokenizer: tok})
	if err != nil {
		t.Fatal(err)
	}
	lengths := NewSynthetic(scenarios.Synthetic{InputTokens: scenarios.Lengths{Mean: 300, Stddev: 100}, OutputTokens: scenarios.Lengths{Mean: 8}}, 3, "p")
	for range 50 {
		it, _ := src.Next()
		want := lengths.Next().InputTokens // the same length stream, without a tokenizer
		if p := it.Prompt; !p.Exact || p.InputTokens != want || tok.Count(p.Text) != want {
			t.Fatalf("prompt of %d tokens (exact %v) counts %d, want %d", p.InputTokens, p.Exact, tok.Count(p.Text), want)
		}
	}
}

// item is the part of an Item the format tests compare.
type item struct {
	At       time.Duration
	In, Out  int
	Text     string
	Session  string
	Messages int
	Turns    []time.Duration
	Cancel   time.Duration
}

func summarize(it Item, withText bool) item {
	s := item{At: it.At, In: it.Prompt.InputTokens, Out: it.Prompt.OutputTokens, Session: it.Prompt.Session,
		Messages: len(it.Prompt.Messages), Cancel: it.CancelAfter}
	if withText {
		s.Text = it.Prompt.Text
	}
	for _, tu := range it.Turns {
		s.Turns = append(s.Turns, tu.Delay)
	}
	return s
}

func TestFormats(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name, format, timing, data string
		speedup                    float64
		want                       []item
	}{
		{"single_turn replay", "single_turn", "replay", `{"text": "a b c", "output_length": 5, "timestamp": 10}
{"texts": ["d", {"contents": ["e f"]}], "delay": 20, "session_id": "s"}

{"text": "g", "timestamp": 40}
`, 2, []item{
			{At: 0, In: 3, Out: 5, Text: "a b c"},
			{At: 10 * ms, In: 3, Out: 64, Text: "d\ne f", Session: "s"},
			{At: 15 * ms, In: 1, Out: 64, Text: "g"},
		}},
		{"single_turn arrival ignores time", "single_turn", "arrival", `{"text": "a", "output_length": 0}`, 1,
			[]item{{In: 1, Out: 1, Text: "a"}}},
		{"mooncake", "mooncake", "replay", `{"timestamp": 0, "input_length": 6, "output_length": 2, "hash_ids": [1, 2]}
{"timestamp": 1000, "text_input": "hi there", "session_id": "x"}
`, 10, []item{{At: 0, In: 6, Out: 2}, {At: 100 * ms, In: 2, Out: 64, Text: "hi there", Session: "x"}}},
		{"azure", "azure", "replay", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,48,10\n2023-11-16 18:17:04.0319600,31,0\n", 1,
			[]item{{In: 48, Out: 10}, {At: 52 * ms, In: 31, Out: 1}}},
		{"burstgpt", "burstgpt", "replay", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation log\n7.5,GPT-4,1087,0,1087,API log\n", 1,
			[]item{{In: 472, Out: 18}, {At: 2500 * ms, In: 1087, Out: 1}}},
		{"sharegpt", "sharegpt", "arrival", `[{"id": "1", "conversations": [{"from": "human", "value": "why so"}, {"from": "gpt", "value": "because of x"}]},
 {"id": "2", "conversations": [{"from": "gpt", "value": "lonely"}]},
 {"id": "3", "conversations": [{"from": "system", "value": "s"}, {"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}]}]`, 1,
			[]item{{In: 2, Out: 3, Text: "why so"}, {In: 1, Out: 1, Text: "q"}}},
		{"multi_turn", "multi_turn", "arrival", `{"session_id": "c1", "turns": [{"text": "hi", "output_length": 3}, {"role": "assistant", "text": "hello you"}, {"text": "more please", "delay": 1500}, {"text": "again", "delay": 10}]}
`, 1, []item{{In: 1, Out: 3, Text: "hi", Session: "c1", Messages: 1, Turns: []time.Duration{1500 * ms, 10 * ms}}}},
		{"multi_turn replay", "multi_turn", "replay", `{"session_id": "a", "turns": [{"text": "x", "timestamp": 100}, {"text": "y", "delay": 20}]}
{"session_id": "b", "turns": [{"text": "z", "timestamp": 300}]}
`, 2, []item{{In: 1, Out: 64, Text: "x", Session: "a", Messages: 1, Turns: []time.Duration{10 * ms}}, {At: 100 * ms, In: 1, Out: 64, Text: "z", Session: "b", Messages: 1}}},
		{"weka", "weka_agentx", "replay", `{"id": "t", "block_size": 2, "requests": [
  {"t": 0, "type": "n", "in": 3, "out": 2, "hash_ids": [1, 2]},
  {"t": 2.0, "type": "subagent", "agent_id": "a1", "requests": [{"t": 0.5, "type": "s", "in": 4, "out": 1, "hash_ids": [1, 2]}]},
  {"t": 1.0, "type": "n", "in": 5, "out": 3, "think_time": 1}]}`, 1,
			[]item{{In: 3, Out: 2, Session: "t"}, {At: 500 * ms, In: 4, Out: 1, Session: "t/a1"}, {At: time.Second, In: 5, Out: 3, Session: "t"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := load(tc.format, tc.timing, tc.speedup, []byte(tc.data), nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range tc.want {
				it, err := s.Next()
				if err != nil {
					t.Fatal(err)
				}
				if got := summarize(it, want.Text != ""); !reflect.DeepEqual(got, want) {
					t.Errorf("item %d = %+v\nwant %+v", i, got, want)
				}
			}
		})
	}
}

func TestMultiTurnHistory(t *testing.T) {
	s, err := load("multi_turn", "arrival", 1, []byte(`{"session_id": "c", "turns": [{"text": "one", "output_length": 4}, {"text": "two"}, {"role": "assistant", "text": "answer two"}, {"text": "three"}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	it, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := PassRequests(s); !ok || n != 3 {
		t.Errorf("PassRequests = %d, %v; want the 3 user turns", n, ok)
	}
	roles := func(p Prompt) (out []string) {
		for _, m := range p.Messages {
			out = append(out, m.Role+":"+m.Content)
		}
		return out
	}
	last := it.Turns[1].Prompt
	got := roles(last)
	// The first answer was not recorded: a placeholder of its output length (4 words).
	if len(got) != 5 || got[0] != "user:one" || len(strings.Fields(strings.TrimPrefix(got[1], "assistant:"))) != 4 ||
		got[2] != "user:two" || got[3] != "assistant:answer two" || got[4] != "user:three" {
		t.Errorf("third turn's messages = %q", got)
	}
	if last.Session != "c" || last.Text != "three" || last.OutputTokens != 64 {
		t.Errorf("third turn = %+v", last)
	}
	if want := 1 + 4 + 1 + 2 + 1; last.InputTokens != want {
		t.Errorf("third turn InputTokens = %d, want %d (the whole history)", last.InputTokens, want)
	}
	if p := it.Turns[0].Prompt; p.OutputTokens != 2 {
		t.Errorf("second turn asks for %d tokens, want 2 (its recorded answer's length)", p.OutputTokens)
	}
}

// TestMultiTurnSystemTurn: a leading system turn is the conversation's
// system message, ahead of every turn's messages and counted in each, not
// a request of its own, as AIPerf 0.13 hoists it (its custom-dataset
// tutorial's system_prompt.jsonl).
func TestMultiTurnSystemTurn(t *testing.T) {
	s, err := load("multi_turn", "arrival", 1, []byte(`{"session_id": "chat_1", "turns": [{"role": "system", "text": "Be terse."}, {"text": "What is ML?"}, {"text": "An example."}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := PassRequests(s); !ok || n != 2 {
		t.Errorf("PassRequests = %d, %v; want the 2 user turns", n, ok)
	}
	it, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range []Prompt{it.Prompt, it.Turns[0].Prompt} {
		if len(it.Turns) != 1 || len(p.Messages) < 2 || p.Messages[0] != (Message{Role: "system", Content: "Be terse."}) || p.Messages[1].Content != "What is ML?" {
			t.Fatalf("turn %d: %d later turns, messages %+v; want the system message first in each", i+1, len(it.Turns), p.Messages)
		}
	}
	if want := 2 + 3; it.Prompt.InputTokens != want {
		t.Errorf("first turn InputTokens = %d, want %d (system and user)", it.Prompt.InputTokens, want)
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, format, timing, data, want string
	}{
		{"not JSON", "mooncake", "replay", "{\"timestamp\": 0, \"input_length\": 1}\n{oops\n", `f:2: not a mooncake entry (invalid character 'o' looking for beginning of object key string); want e.g. {"timestamp": 0, "input_length": 1024, "output_length": 64, "hash_ids": [0, 1]}`},
		{"wrong type", "mooncake", "replay", `{"timestamp": 0, "input_length": "5"}`, `f:1: not a mooncake entry (cannot unmarshal string into Go struct field .input_length of type int); want e.g. {"timestamp": 0, "input_length": 1024, "output_length": 64, "hash_ids": [0, 1]}`},
		{"negative length", "mooncake", "replay", "\n\n{\"timestamp\": 0, \"input_length\": -5}", "f:3: negative length (input -5 tokens, output not given); lengths are >= 0"},
		{"huge length", "mooncake", "arrival", `{"input_length": 1000000000000}`, "f:1: length over 1048576 tokens (input 1000000000000, output not given); this is taken for corrupt data"},
		{"no prompt", "mooncake", "arrival", `{"output_length": 5}`, `f:1: has neither input_length nor text_input; want e.g. {"timestamp": 0, "input_length": 1024, "output_length": 64, "hash_ids": [0, 1]}`},
		{"time goes back", "mooncake", "replay", "{\"timestamp\": 5, \"input_length\": 1}\n{\"timestamp\": 4, \"input_length\": 1}\n", "f:2: timestamp 4 ms is earlier than the one before (5 ms); replay needs them in order: sort the file by timestamp, or use timing: arrival"},
		{"no timestamp", "single_turn", "replay", `{"text": "hi"}`, "f:1: has no timestamp, which timing: replay needs; add one, or use timing: arrival"},
		{"empty", "mooncake", "replay", "\n", "f: holds no requests; check the format (mooncake) and the file"},
		{"line too long", "single_turn", "arrival", `{"text": "` + strings.Repeat("a", maxLine) + `"}`, "f:1: line longer than 64 MiB"},
		{"single_turn both", "single_turn", "arrival", `{"text": "a", "texts": ["b"]}`, "f:1: sets both text and texts; keep one"},
		{"multi_turn role", "multi_turn", "arrival", `{"turns": [{"text": "a", "role": "tool"}]}`, `f:1: turn 1 has role "tool"; want user or assistant`},
		{"multi_turn late system", "multi_turn", "arrival", `{"turns": [{"text": "a"}, {"text": "b", "role": "system"}]}`, `f:1: turn 2 has role "system"; want user or assistant (a system turn leads, with text only)`},
		{"multi_turn system with an image", "multi_turn", "arrival", `{"turns": [{"text": "s", "role": "system", "image": "https://example.com/a.png"}, {"text": "b"}]}`, `f:1: turn 1 has role "system"; want user or assistant (a system turn leads, with text only)`},
		{"multi_turn no user", "multi_turn", "arrival", `{"turns": [{"text": "a", "role": "assistant"}]}`, `f:1: has no user turn; want e.g. {"session_id": "s1", "turns": [{"text": "Hi", "output_length": 16}, {"text": "More?", "delay": 2000}]}`},
		{"csv header", "azure", "replay", "time,in,out\n1,2,3\n", "f:1: the header has no column \"TIMESTAMP\"; a azure file starts with TIMESTAMP,ContextTokens,GeneratedTokens"},
		{"csv number", "azure", "replay", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03,12,3\n2023-11-16 18:17:04,x,3\n", `f:3: ContextTokens "x" is not a whole number`},
		{"csv time", "azure", "replay", "TIMESTAMP,ContextTokens,GeneratedTokens\nyesterday,12,3\n", `f:2: TIMESTAMP "yesterday" is not a time like 2023-11-16 18:17:03.9799600`},
		{"csv quote", "burstgpt", "replay", "Timestamp,Request tokens,Response tokens\n1,2,3\n2,\"3,4\n", `f:3: malformed CSV: extraneous or missing " in quoted-field`},
		{"burstgpt negative", "burstgpt", "replay", "Timestamp,Request tokens,Response tokens\n1,2,-3\n", "f:2: negative length (input 2 tokens, output -3 tokens); lengths are >= 0"},
		{"sharegpt not array", "sharegpt", "arrival", `{"id": 1}`, `f:1: a ShareGPT file is one JSON array, e.g. [{"id": "a", "conversations": [{"from": "human", "value": "Hi"}, {"from": "gpt", "value": "Hello!"}]}]`},
		{"sharegpt bad entry", "sharegpt", "arrival", "[\n{\"conversations\": [{\"from\": \"human\", \"value\": \"q\"}, {\"from\": \"gpt\", \"value\": \"a\"}]},\n{\"conversations\": 7}]", `f:3: conversation 2: cannot unmarshal number into Go struct field .conversations of type []struct { From string "json:\"from\""; Value string "json:\"value\"" }; want e.g. [{"id": "a", "conversations": [{"from": "human", "value": "Hi"}, {"from": "gpt", "value": "Hello!"}]}]`},
		{"weka missing t", "weka_agentx", "replay", "{\"id\": \"a\", \"requests\": [{\"t\": 0, \"in\": 1}]}\n{\"id\": \"b\", \"requests\": [{\"in\": 1}]}", `f:2: trace 2: request 1 of b lacks t or in; want e.g. {"id": "t1", "block_size": 64, "requests": [{"t": 0, "type": "n", "in": 900, "out": 40, "hash_ids": [1, 2]}]}`},
		{"weka negative", "weka_agentx", "replay", `{"id": "a", "requests": [{"t": 0, "in": -1}]}`, "f:1: trace 1: request 1 of a has a negative length (in -1 tokens, out not given); lengths are >= 0"},
		{"parquet garbage", "baseten", "replay", "PAR1 not really", "f: not a Parquet file: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(tc.format, tc.timing, 1, []byte(tc.data), nil)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}

// TestReplayPasses checks that a never-ending replay starts its next pass one
// mean gap after the last request, with fresh hash blocks.
func TestReplayPasses(t *testing.T) {
	s, err := load("mooncake", "replay", 2, []byte(`{"timestamp": 1000, "input_length": 4, "hash_ids": [1]}
{"timestamp": 2000, "input_length": 4, "hash_ids": [1]}
{"timestamp": 3000, "input_length": 4, "hash_ids": [1]}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var at []time.Duration
	var texts []string
	for range 6 {
		it, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		at = append(at, it.At)
		texts = append(texts, it.Prompt.Text)
	}
	ms := time.Millisecond
	if want := []time.Duration{0, 500 * ms, 1000 * ms, 1500 * ms, 2000 * ms, 2500 * ms}; !slices.Equal(at, want) {
		t.Errorf("offsets %v, want %v", at, want)
	}
	if texts[0] != texts[2] || texts[3] != texts[5] || texts[0] == texts[3] {
		t.Errorf("equal hash ids gave %q in the first pass and %q in the second; want equal within a pass, different across", texts[:3], texts[3:])
	}
}

// TestMooncakePrefixSharing replays the start of the real Mooncake trace and
// checks with GPT-2 that lengths are exact and that requests sharing their
// first k hash ids share exactly their first k blocks of tokens.
func TestMooncakePrefixSharing(t *testing.T) {
	tok := gpt2(t)
	data, err := os.ReadFile(shared(t, "traces/mooncake_conversation_trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	text, err := NewText(tok)
	if err != nil {
		t.Fatal(err)
	}
	cfg := scenarios.File{Format: FormatMooncake, Timing: scenarios.TimingReplay, Speedup: 1, BlockSize: 512, OutputTokens: scenarios.Lengths{Mean: 64}}
	s, err := newFileSource(cfg, bytes.NewReader(data), "mooncake", text, Options{Seed: 1, Component: "p"})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := newMooncake(bytes.NewReader(data), "mooncake")
	if err != nil {
		t.Fatal(err)
	}
	type req struct {
		ids    []uint64
		tokens []int
	}
	var reqs []req
	for range 120 {
		rec, err := recs.next()
		if err != nil {
			t.Fatal(err)
		}
		it, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		ids := tok.Encode(it.Prompt.Text)
		if len(ids) != rec.in || it.Prompt.InputTokens != rec.in || !it.Prompt.Exact {
			t.Fatalf("line %d: %d tokens (InputTokens %d), want input_length %d", rec.line, len(ids), it.Prompt.InputTokens, rec.in)
		}
		reqs = append(reqs, req{rec.hashIDs, ids})
	}
	shared := 0
	for i, a := range reqs {
		for _, b := range reqs[:i] {
			k := 0
			for k < min(len(a.ids), len(b.ids)) && a.ids[k] == b.ids[k] {
				k++
			}
			n := min(k*512, len(a.tokens), len(b.tokens))
			if !slices.Equal(a.tokens[:n], b.tokens[:n]) {
				t.Fatalf("requests sharing %d hash ids differ within their first %d tokens", k, n)
			}
			if k < len(a.ids) && k < len(b.ids) {
				// Different ids from block k on: the blocks must differ.
				end := min((k+1)*512, len(a.tokens), len(b.tokens))
				if slices.Equal(a.tokens[k*512:end], b.tokens[k*512:end]) {
					t.Fatalf("requests with different hash ids at block %d have equal tokens there", k)
				}
			}
			if k > 0 {
				shared++
			}
		}
	}
	if shared == 0 {
		t.Fatal("no two requests share a hash id: the test checked nothing")
	}
	t.Logf("%d pairs of requests share a prefix", shared)
}

// TestRandomPool draws a random_pool's entries at random, with replacement:
// the same seed draws the same sequence, another seed another one, and every
// entry is drawn about as often as the others.
func TestRandomPool(t *testing.T) {
	data := []byte(`{"text": "alpha", "output_length": 1}
{"text": "beta", "output_length": 2}

{"text": "gamma", "output_length": 3}
{"text": "delta", "output_length": 4}
`)
	draw := func(seed uint64) []string {
		text, err := NewText(nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg := scenarios.File{Path: "f", Format: FormatRandomPool, Timing: scenarios.TimingArrival, OutputTokens: scenarios.Lengths{Mean: 64}}
		s, err := newFileSource(cfg, bytes.NewReader(data), "f", text, Options{Seed: seed, Component: "p"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for range 400 {
			it, err := s.Next()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, it.Prompt.Text)
		}
		return got
	}
	a := draw(1)
	if b := draw(1); !slices.Equal(a, b) {
		t.Errorf("seed 1 drew differently twice:\n%v\n%v", a[:8], b[:8])
	}
	if c := draw(2); slices.Equal(a, c) {
		t.Errorf("seeds 1 and 2 drew the same sequence %v…", a[:8])
	}
	if inOrder := []string{"alpha", "beta", "gamma", "delta", "alpha", "beta", "gamma", "delta"}; slices.Equal(a[:8], inOrder) {
		t.Errorf("drew %v, the file's order", a[:8])
	}
	counts := map[string]int{}
	for _, s := range a {
		counts[s]++
	}
	// 400 uniform draws of 4: 100 each, standard deviation 8.7.
	for _, s := range []string{"alpha", "beta", "gamma", "delta"} {
		if n := counts[s]; n < 65 || n > 135 {
			t.Errorf("%q drawn %d times of 400, want about 100 (counts %v)", s, n, counts)
		}
	}
	if len(counts) != 4 {
		t.Errorf("drew %v, want only the pool's four entries", counts)
	}
}

// TestReplayWindow: start_offset and end_offset replay only the entries in
// the window, both ends included, with start_offset as time 0; absolute
// timestamps keep the file's own 0; the default starts at the first entry.
func TestReplayWindow(t *testing.T) {
	trace := []byte(`{"timestamp": 1000, "input_length": 4, "output_length": 1}
{"timestamp": 2000, "input_length": 4, "output_length": 2}
{"timestamp": 3000, "input_length": 4, "output_length": 3}
{"timestamp": 4000, "input_length": 4, "output_length": 4}
`)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, tc := range []struct {
		name       string
		start, end time.Duration
		absolute   bool
		want       []item // the first pass, and the first entry of the next
		passLen    uint64
	}{
		{"whole file from its first", 0, 0, false, []item{{At: 0, Out: 1}, {At: ms(1000), Out: 2}, {At: ms(2000), Out: 3}, {At: ms(3000), Out: 4}, {At: ms(4000), Out: 1}}, 4},
		{"absolute", 0, 0, true, []item{{At: ms(1000), Out: 1}, {At: ms(2000), Out: 2}, {At: ms(3000), Out: 3}, {At: ms(4000), Out: 4}, {At: ms(5000), Out: 1}}, 4},
		{"window", ms(2000), ms(3000), false, []item{{At: 0, Out: 2}, {At: ms(1000), Out: 3}, {At: ms(2000), Out: 2}}, 2},
		{"start between entries", ms(2500), 0, false, []item{{At: ms(500), Out: 3}, {At: ms(1500), Out: 4}, {At: ms(2500), Out: 3}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, err := NewText(nil)
			if err != nil {
				t.Fatal(err)
			}
			cfg := scenarios.File{Path: "f", Format: FormatMooncake, Timing: scenarios.TimingReplay, Speedup: 1, BlockSize: 4, OutputTokens: scenarios.Lengths{Mean: 64},
				StartOffset: scenarios.Duration(tc.start), EndOffset: scenarios.Duration(tc.end), AbsoluteTimestamps: tc.absolute}
			src, err := newFileSource(cfg, bytes.NewReader(trace), "f", text, Options{Seed: 1, Component: "p"})
			if err != nil {
				t.Fatal(err)
			}
			var got []item
			for range tc.want {
				it, err := src.Next()
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, item{At: it.At, Out: it.Prompt.OutputTokens})
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
			if n, _ := PassRequests(src); n != tc.passLen {
				t.Errorf("a pass is %d requests, want %d", n, tc.passLen)
			}
		})
	}
	text, _ := NewText(nil)
	cfg := scenarios.File{Path: "f", Format: FormatMooncake, Timing: scenarios.TimingReplay, Speedup: 1, BlockSize: 4, OutputTokens: scenarios.Lengths{Mean: 64},
		StartOffset: scenarios.Duration(ms(5000))}
	if _, err := newFileSource(cfg, bytes.NewReader(trace), "f", text, Options{}); err == nil || !strings.Contains(err.Error(), "between start_offset") {
		t.Errorf("a window with no entries: %v, want an error naming the window", err)
	}
}

// TestDetect: a file given without a format is read as AIPerf infers one
// from its first non-empty line.
func TestDetect(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ text, want string }{
		{"\n" + `{"timestamp": 0, "input_length": 100, "output_length": 10, "hash_ids": [1]}` + "\n", FormatMooncake},
		{`{"input_length": 10}`, FormatMooncake},
		{`{"text_input": "hi", "output_length": 4}`, FormatMooncake},
		{`{"session_id": "a", "turns": [{"text": "hi"}]}`, FormatMultiTurn},
		{`{"text": "hi"}`, FormatSingleTurn},
		{"not json", FormatSingleTurn},
		{"", FormatSingleTurn},
	} {
		path := filepath.Join(dir, "f.jsonl")
		if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := Detect(path); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.text, got, tc.want)
		}
	}
	if got := Detect(filepath.Join(dir, "missing.jsonl")); got != FormatSingleTurn {
		t.Errorf("a missing file: %s, want %s (its reader says it is missing)", got, FormatSingleTurn)
	}
}

// TestFileOutputTokens: an entry without an output length gets the
// dataset's output_tokens ({mean: 0}: no limit); one with its own keeps it.
func TestFileOutputTokens(t *testing.T) {
	text, _ := NewText(nil)
	data := []byte(`{"text": "a b"}` + "\n" + `{"text": "c", "output_length": 7}` + "\n")
	for _, tc := range []struct {
		out  scenarios.Lengths
		want []int
	}{
		{scenarios.Lengths{}, []int{0, 7}},
		{scenarios.Lengths{Mean: 10}, []int{10, 7}},
	} {
		cfg := scenarios.File{Path: "f", Format: FormatSingleTurn, Timing: scenarios.TimingArrival, OutputTokens: tc.out}
		s, err := newFileSource(cfg, bytes.NewReader(data), "f", text, Options{Seed: 1, Component: "p"})
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for range tc.want {
			it, err := s.Next()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, it.Prompt.OutputTokens)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("output_tokens %+v: lengths %v, want %v", tc.out, got, tc.want)
		}
	}
}

// TestAIPerfDatasetTypes: each format's --custom-dataset-type in AIPerf's input_config, as
// bench's artifacts and a burst run's write it and bench's flag accepts it.
func TestAIPerfDatasetTypes(t *testing.T) {
	for format, want := range map[string]string{
		FormatMooncake: "mooncake_trace", FormatBaseten: "baseten_trace", FormatBurstGPT: "burst_gpt_trace",
		FormatWekaAgentX: "weka_trace", FormatSingleTurn: "single_turn", FormatMultiTurn: "multi_turn", FormatRandomPool: "random_pool",
	} {
		if got := scenarios.AIPerfDatasetType(format); got != want {
			t.Errorf("AIPerfDatasetType(%s) = %s, want %s", format, got, want)
		}
	}
}
