package scenarios

import (
	"testing"
	"time"
)

func TestWorkloadFields(t *testing.T) {
	data := edit(t, "    arrival: {rate: 0.2}\n", `    arrival: {rate: 0.2}
    dataset:
      synthetic:
        shared_system_prompt_length: 100
        user_context_length: 20
        entries: 50
        conversation: {turns: {mean: 3, stddev: 1}, turn_delay: {mean: 2s, stddev: 500ms}}
`)
	c, err := Parse([]byte(data), "s.yml")
	if err != nil {
		t.Fatal(err)
	}
	s := c.Probes["steady"].Dataset.Synthetic
	want := Conversation{Turns: Lengths{Mean: 3, Stddev: 1}, TurnDelay: Delays{Mean: Duration(2 * time.Second), Stddev: Duration(500 * time.Millisecond)}}
	if s.SharedSystemPromptLength != 100 || s.UserContextLength != 20 || s.Entries != 50 || s.Conversation == nil || *s.Conversation != want ||
		s.InputTokens.Mean != defaultInputTokens {
		t.Fatalf("synthetic = %+v", s)
	}
}

func TestWorkloadErrors(t *testing.T) {
	for _, tc := range []struct{ name, synthetic, want string }{
		{"shared length", "shared_system_prompt_length: 0", `s.yml:11:38: probes.steady.dataset.synthetic.shared_system_prompt_length: must be 1 to 1,048,576 tokens, not 0, e.g. shared_system_prompt_length: 1000`},
		{"prefix fields", "prefix: {pool_size: 0}", `s.yml:11:9: probes.steady.dataset.synthetic.prefix.length: must be 1 to 1,048,576 tokens (per prefix), not 0, e.g. prefix: {pool_size: 8, length: 512}
s.yml:11:29: probes.steady.dataset.synthetic.prefix.pool_size: must be 1 to 1,048,576 (distinct prefixes), not 0, e.g. prefix: {pool_size: 8, length: 512}`},
		{"prefix and user context", "prefix: {pool_size: 2, length: 8}\n        entries: 4\n        user_context_length: 5",
			`s.yml:13:30: probes.steady.dataset.synthetic.user_context_length: cannot be used with prefix; keep one of them`},
		{"user context without entries", "user_context_length: 5", `s.yml:11:30: probes.steady.dataset.synthetic.user_context_length: needs entries: each entry has its own user context, so write entries: N (the number of distinct users)`},
		{"entries", "entries: 0", `s.yml:11:18: probes.steady.dataset.synthetic.entries: must be 1 to 1,048,576 (distinct conversations, reused), not 0, e.g. entries: 100`},
		{"turns", "conversation: {turn_delay: {mean: 1s}}", `s.yml:11:9: probes.steady.dataset.synthetic.conversation.turns.mean: must be >= 1, e.g. mean: 3`},
		{"delay", "conversation: {turns: {mean: 2}, turn_delay: {mean: -1s}}", `s.yml:11:61: probes.steady.dataset.synthetic.conversation.turn_delay.mean: must be >= 0 (0s sends the next turn when the last ended), e.g. turn_delay: {mean: 2s, stddev: 500ms}`},
		{"unknown field", "conversations: {turns: {mean: 2}}", `s.yml:11:9: probes.steady.dataset.synthetic: unknown field "conversations"; did you mean "conversation"?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := edit(t, "    arrival: {rate: 0.2}\n", "    arrival: {rate: 0.2}\n    dataset:\n      synthetic:\n        "+tc.synthetic+"\n")
			if got := parseError(t, data); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestSystemPromptErrors(t *testing.T) {
	for _, tc := range []struct{ name, dataset, want string }{
		{"blank", "system_prompt: \" \"\n      synthetic: {}", `s.yml:10:22: probes.steady.dataset.system_prompt: is empty; write the system message, or remove it`},
		{"with shared system prompt", "system_prompt: hi\n      synthetic: {shared_system_prompt_length: 10}",
			`s.yml:11:48: probes.steady.dataset.synthetic.shared_system_prompt_length: cannot be used with dataset.system_prompt; keep one of them`},
		{"with prefix", "system_prompt: hi\n      synthetic: {prefix: {pool_size: 2, length: 4}}",
			`s.yml:11:19: probes.steady.dataset.synthetic.prefix: cannot be used with dataset.system_prompt; keep one of them`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := edit(t, "    arrival: {rate: 0.2}\n", "    arrival: {rate: 0.2}\n    dataset:\n      "+tc.dataset+"\n")
			if got := parseError(t, data); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	// With any source.
	data := edit(t, "    arrival: {rate: 0.2}\n", "    arrival: {rate: 0.2}\n    dataset:\n      system_prompt: Be brief.\n      prompts: {texts: [hi]}\n")
	if c, err := Parse([]byte(data), "s.yml"); err != nil || c.Probes["steady"].Dataset.SystemPrompt != "Be brief." {
		t.Fatalf("system prompt with prompts: %v", err)
	}
}
