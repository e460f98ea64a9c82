package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBenchTemplate: AIPerf 0.13's template endpoint tutorial lines become a
// template target that calls the whole --url.
func TestBenchTemplate(t *testing.T) {
	file := filepath.Join(t.TempDir(), "chat_template.json")
	if err := os.WriteFile(file, []byte(`{"prompt": {{ text|tojson }}, "max_new_tokens": {{ max_tokens|tojson }}, "stream": {{ stream|tojson }}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"inline texts", []string{"--model", "embedding-model", "--url", "http://localhost:8000/embed", "--endpoint-type", "template",
			"--extra-inputs", `payload_template:{"input": {{ texts|tojson }}, "model": {{ model|tojson }}}`, "--extra-inputs", "response_field:embeddings"},
			[]string{"url: http://localhost:8000\n", "path: /embed", "- '{{prompt}}'", "model: '{{model}}'", "text_path: embeddings"}},
		{"named", []string{"--model", "nv-embed-v2", "--url", "http://localhost:8000/embeddings", "--endpoint-type", "template",
			"--extra-inputs", "payload_template:nv-embedqa", "--extra-inputs", "response_field:data[0].embedding"},
			[]string{"path: /embeddings", "text:", "text_path: data.0.embedding"}},
		{"file, other extras in the body", []string{"--model", "custom-llm", "--url", "http://localhost:8000/generate", "--endpoint-type", "template", "--streaming",
			"--extra-inputs", "payload_template:" + file, "--extra-inputs", "response_field:generated_text", "--extra-inputs", "temperature:0.5"},
			[]string{"path: /generate", "max_new_tokens: '{{max_tokens}}'", "stream: '{{stream}}'", "temperature: 0.5", "text_path: generated_text"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, yml := scenarioYAML(t, tc.args, tc.want)
			checkWritten(t, sc, yml)
		})
	}
}

func TestBenchTemplateErrors(t *testing.T) {
	base := []string{"--model", "m", "--url", "localhost:8000/custom-endpoint", "--endpoint-type", "template"}
	for _, tc := range []struct {
		extra []string
		want  string
	}{
		{[]string{"payload_template:{\"text\": {{ text|tojson }}}"}, "give --extra-inputs response_field:PATH"},
		{[]string{"payload_template:{\"text\": {{ text|upper }}}", "response_field:text"}, "write a template endpoint in a scenario file"},
		{[]string{"payload_template:{\"text\": {{ text|tojson }}}", "response_field:data[*].embedding"}, "JMESPath keys and [N] indexes only"},
	} {
		args := base
		for _, e := range tc.extra {
			args = append(args, "--extra-inputs", e)
		}
		wantScenarioError(t, args, tc.want)
	}
	wantScenarioError(t, append(base, "--url", "localhost:8001/other", "--extra-inputs", "payload_template:{\"text\": {{ text|tojson }}}", "--extra-inputs", "response_field:text"),
		"--endpoint-type template with several --url: their paths differ (/custom-endpoint, /other)")
}

// TestBenchTemplateSeveralURLs: the template calls the one path of several
// --url, each at its own server.
func TestBenchTemplateSeveralURLs(t *testing.T) {
	f := parseBench(t, "--model", "m", "--url", "h1:8000/generate", "http://h2:8000/generate", "--endpoint-type", "template",
		"--extra-inputs", `payload_template:{"text": {{ text|tojson }}}`, "--extra-inputs", "response_field:text")
	sc, err := f.scenario()
	if err != nil {
		t.Fatal(err)
	}
	tg := sc.cfg.Targets["bench"]
	if tg.URL != "http://h1:8000" || len(tg.MoreURLs) != 1 || tg.MoreURLs[0] != "http://h2:8000" || tg.Template.Path != "/generate" {
		t.Errorf("url %s, more %q, template path %s; want http://h1:8000, [http://h2:8000], /generate", tg.URL, tg.MoreURLs, tg.Template.Path)
	}
}
