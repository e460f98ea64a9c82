package scenarios

import (
	"reflect"
	"strings"
	"testing"
)

// The payload templates of AIPerf 0.13's template endpoint tutorial.
func TestFromJinja(t *testing.T) {
	for _, c := range []struct {
		src  string
		want map[string]any
	}{
		{`{"text": {{ text|tojson }}}`, map[string]any{"text": PlaceholderPrompt}},
		{`{"input": {{ texts|tojson }}, "model": {{ model|tojson }}}`, map[string]any{"input": []any{PlaceholderPrompt}, "model": PlaceholderModel}},
		{`{"prompt": "Q: {{ text }}", "max_new_tokens": {{max_tokens|tojson}}, "stream": {{ stream|tojson }}}`, map[string]any{"prompt": "Q: " + PlaceholderPrompt, "max_new_tokens": PlaceholderMaxTokens, "stream": PlaceholderStream}},
	} {
		got, err := FromJinja(c.src)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("FromJinja(%s) = %v, %v; want %v", c.src, got, err, c.want)
		}
	}
}

func TestFromJinjaRefuses(t *testing.T) {
	for _, src := range []string{
		`{"text": {{ text|upper }}}`,
		`{"text": {{ image|tojson }}}`,
		`{% if stream %}{"a": 1}{% endif %}`,
		`{"text": {{ text }}}`,
		`{"text": "{{ text|tojson }}"}`,
		`{"input": "{{ texts }}"}`,
		`[{{ text|tojson }}]`,
	} {
		_, err := FromJinja(src)
		if err == nil || !strings.Contains(err.Error(), "payload_template") {
			t.Errorf("FromJinja(%s) = %v; want a refusal", src, err)
		}
	}
}

func TestTextPathFromJMESPath(t *testing.T) {
	for q, want := range map[string]string{"generated_text": "generated_text", "embeddings": "embeddings", "choices[0].text": "choices.0.text", "a.b[2]": "a.b.2"} {
		if got, err := TextPathFromJMESPath(q); got != want || err != nil {
			t.Errorf("TextPathFromJMESPath(%q) = %q, %v; want %q", q, got, err, want)
		}
	}
	for _, q := range []string{"data[*].embedding", "a || b", "[0]", "a..b"} {
		if _, err := TextPathFromJMESPath(q); err == nil {
			t.Errorf("TextPathFromJMESPath(%q) accepted", q)
		}
	}
}
