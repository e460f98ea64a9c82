package prober

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// TestFileMediaEndpoint checks that a dataset file's images go out as chat
// content parts in AIPerf's order (text, image, audio), and that a target
// whose endpoint sends none refuses the file at start rather than drop them.
func TestFileMediaEndpoint(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "m.jsonl")
	if err := os.WriteFile(file, []byte(`{"text": "q", "image": "https://h/1.png", "audio": "wav,AAAA"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	build := func(endpoint string) (*Probe, error) {
		y := fmt.Sprintf("targets:\n  t: {url: http://127.0.0.1:1, model: m, endpoint: %s}\nprobes:\n  a:\n    target: t\n    arrival: {rate: 1}\n    dataset: {file: {path: %s, format: single_turn}}\n", endpoint, file)
		cfg, err := scenarios.Parse([]byte(y), filepath.Join(dir, "s.yml"))
		if err != nil {
			t.Fatal(err)
		}
		tg, err := NewTarget("t", cfg.Targets["t"])
		if err != nil {
			t.Fatal(err)
		}
		return NewProbe("a", cfg.Probes["a"], tg, cfg.Global.Seed, record.Shard{})
	}
	if _, err := build("completions"); err == nil || !strings.Contains(err.Error(), "m.jsonl:1: carries images or audio, which only endpoint chat sends; the target's is completions") {
		t.Errorf("completions: %v; want the file refused", err)
	}
	p, err := build("chat")
	if err != nil {
		t.Fatal(err)
	}
	it, err := p.source.Next()
	if err != nil {
		t.Fatal(err)
	}
	req, err := NewRequest(p.Target, it.Prompt, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `"content":[{"type":"text","text":"q"},{"type":"image_url","image_url":{"url":"https://h/1.png"}},{"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}}]`
	if !strings.Contains(string(req.Body), want) || req.Images != 1 || req.AudioSeconds != 0 {
		t.Errorf("body %s, %d images, %g s of audio; want %s, 1 image and no duration", req.Body, req.Images, req.AudioSeconds, want)
	}
}

// TestImagesCountHistory checks that a request's image count is every
// image its body carries, the history's too, as AIPerf counts num_images.
func TestImagesCountHistory(t *testing.T) {
	first := &dataset.Media{Images: []string{"https://h/1.png"}}
	last := &dataset.Media{Images: []string{"https://h/2.png", "https://h/3.png"}}
	p := dataset.Prompt{Text: "b", Media: last, Messages: []dataset.Message{
		{Role: "user", Content: "a", Media: first}, {Role: "assistant", Content: "ok"}, {Role: "user", Content: "b", Media: last},
	}}
	req, err := NewRequest(specTarget(t, scenarios.Target{Endpoint: EndpointChat}), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(req.Body), `"image_url"`) / 2; req.Images != 3 || got != 3 {
		t.Errorf("images %d (body %d), want 3", req.Images, got)
	}
}
