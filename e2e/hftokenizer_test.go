package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// hubCommit is the commit the fake Hub says every revision is at.
const hubCommit = "0123456789abcdef0123456789abcdef01234567"

// fakeHub serves the Hugging Face Hub's file API (HEAD and GET
// /ORG/NAME/resolve/REVISION/tokenizer.json, with the X-Repo-Commit and
// ETag headers huggingface_hub reads) for any model, with tokenizer/testdata's
// Qwen2-kind tokenizer, and records the requests it gets.
func fakeHub(t *testing.T) (*httptest.Server, func() []string) {
	t.Helper()
	tok, err := os.ReadFile(filepath.Join(repoRoot(t), "tokenizer", "testdata", "qwen2_tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var asked []string
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.URL.Path)
		mu.Unlock()
		if !strings.HasSuffix(r.URL.Path, "/resolve/main/tokenizer.json") {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		w.Header().Set("X-Repo-Commit", hubCommit)
		w.Header().Set("ETag", `"qwen2-blob"`)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(tok)
	}))
	t.Cleanup(hub.Close)
	return hub, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), asked...)
	}
}

// TestBenchTokenizerFromHub: bench --tokenizer MODEL downloads the model's
// tokenizer.json from the Hub (HF_ENDPOINT) into the Hugging Face cache in
// huggingface_hub's layout, which huggingface_hub itself then finds offline;
// and a cache huggingface_hub filled is read by bench offline, the Hub not
// asked.
func TestBenchTokenizerFromHub(t *testing.T) {
	python := filepath.Join(repoRoot(t), aiperfVenv, "bin", "python")
	if _, err := os.Stat(python); err != nil {
		missingTool(t, python+" is missing", "run `make aiperf` to install AIPerf 0.13.0 (and huggingface_hub with it) from PyPI")
	}
	url := startBlogSimulator(t)
	hub, asked := fakeHub(t)
	work := t.TempDir()
	cache := filepath.Join(work, "hub")
	t.Setenv("HF_ENDPOINT", hub.URL)
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HUB_OFFLINE", "")
	t.Setenv("HF_TOKEN", "")
	run := func(model string) (int, string) {
		return benchIn(t, work, "--model", blogModel, "--endpoint-type", "chat", "--streaming", "--url", url,
			"--request-count", "4", "--isl", "64", "--osl", "8", "--tokenizer", model)
	}
	snap := filepath.Join(cache, "models--Qwen--Qwen3-0.6B", "snapshots", hubCommit, "tokenizer.json")
	code, out := run(blogModel)
	if code != 0 || !strings.Contains(out, "downloaded its tokenizer.json from "+hub.URL+" into the Hugging Face cache: "+snap) {
		t.Fatalf("exit %d, want 0 and the download noted:\n%s", code, out)
	}
	// huggingface_hub finds the file bench wrote, offline.
	py := func(env []string, script string) string {
		cmd := exec.Command(python, "-c", script)
		cmd.Env = append(os.Environ(), env...)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("python: %v\n%s", err, b)
		}
		return strings.TrimSpace(string(b))
	}
	got := py([]string{"HF_HUB_OFFLINE=1"}, `from huggingface_hub import hf_hub_download
print(hf_hub_download("Qwen/Qwen3-0.6B", "tokenizer.json"))`)
	if got != snap {
		t.Errorf("huggingface_hub offline found %q, want %s, which bench wrote", got, snap)
	}

	// huggingface_hub downloads another model into the cache; bench, offline,
	// reads it from there.
	got = py(nil, `from huggingface_hub import hf_hub_download
print(hf_hub_download("Org/Other", "tokenizer.json"))`)
	before := len(asked())
	t.Setenv("HF_HUB_OFFLINE", "1")
	code, out = run("Org/Other")
	if code != 0 || !strings.Contains(out, "its tokenizer.json from the Hugging Face cache: "+got) {
		t.Errorf("offline, cached by huggingface_hub: exit %d, want 0 and %s noted:\n%s", code, got, out)
	}
	// Offline and not cached: bad flags, saying what to do.
	code, out = run("Org/Missing")
	if code != 2 || !strings.Contains(out, "HF_HUB_OFFLINE forbids downloading it") {
		t.Errorf("offline, not cached: exit %d, want 2 saying why:\n%s", code, out)
	}
	if after := asked(); len(after) != before {
		t.Errorf("the Hub was asked %v while offline", after[before:])
	}
}
