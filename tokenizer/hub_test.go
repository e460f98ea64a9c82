package tokenizer

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

const (
	hubCommit = "0123456789abcdef0123456789abcdef01234567"
	hubTagged = "89abcdef0123456789abcdef0123456789abcdef"
)

// fakeHub serves the Hub's file API (GET /ORG/NAME/resolve/REV/FILE) for
// one public model, Org/Tiny, one gated one, Org/Gated (401 without the
// bearer token "secret"), and one large one, Org/Large, whose file is a
// redirect to a CDN as the Hub's LFS files are; it counts the requests.
type fakeHub struct {
	*httptest.Server
	requests atomic.Int32
	auth     atomic.Value // the last Authorization header
}

func newFakeHub(t *testing.T) *fakeHub {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "tiny_tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	h := &fakeHub{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.requests.Add(1)
		h.auth.Store(r.Header.Get("Authorization"))
		if r.URL.Path == "/cdn/blob" {
			w.Header().Set("ETag", `"cdn-etag"`)
			_, _ = w.Write(data)
			return
		}
		model, rest, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/resolve/")
		rev, file, _ := strings.Cut(rest, "/")
		commit := map[string]string{"main": hubCommit, "v1": hubTagged, hubTagged: hubTagged}[rev]
		switch {
		case model == "Org/Gated" && r.Header.Get("Authorization") != "Bearer secret":
			w.Header().Set("X-Error-Code", "GatedRepo")
			w.Header().Set("X-Error-Message", "Access to model Org/Gated is restricted.")
			http.Error(w, "gated", http.StatusUnauthorized)
		case !ok || file != "tokenizer.json" || commit == "" || model != "Org/Tiny" && model != "Org/Gated" && model != "Org/Large":
			w.Header().Set("X-Error-Code", "EntryNotFound")
			http.Error(w, "not found", http.StatusNotFound)
		case model == "Org/Large":
			w.Header().Set("X-Repo-Commit", commit)
			w.Header().Set("X-Linked-Etag", `"`+strings.Repeat("ab", 32)+`"`)
			http.Redirect(w, r, "/cdn/blob", http.StatusFound)
		default:
			w.Header().Set("X-Repo-Commit", commit)
			w.Header().Set("ETag", `W/"blob-sha1"`)
			_, _ = w.Write(data)
		}
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *fakeHub) hub(t *testing.T) *Hub {
	return HubFromEnv(func(k string) string {
		return map[string]string{"HF_ENDPOINT": h.URL, "HF_HUB_CACHE": t.TempDir()}[k]
	})
}

func TestHubDownloadsIntoTheCacheLayout(t *testing.T) {
	fh := newFakeHub(t)
	h := fh.hub(t)
	path, downloaded, err := h.Resolve(context.Background(), "Org/Tiny", "")
	if err != nil || !downloaded {
		t.Fatalf("%v, downloaded %v; want a download", err, downloaded)
	}
	repo := filepath.Join(h.Cache, "models--Org--Tiny")
	if want := filepath.Join(repo, "snapshots", hubCommit, "tokenizer.json"); path != want {
		t.Errorf("path %s, want %s", path, want)
	}
	if ref, err := os.ReadFile(filepath.Join(repo, "refs", "main")); err != nil || string(ref) != hubCommit {
		t.Errorf("refs/main: %q, %v; want the commit %s", ref, err, hubCommit)
	}
	// The snapshot links to the blob named by the (normalised) etag, as
	// huggingface_hub writes it.
	if link, err := os.Readlink(path); err != nil || link != filepath.Join("..", "..", "blobs", "blob-sha1") {
		t.Errorf("snapshot link %q, %v; want ../../blobs/blob-sha1", link, err)
	}
	if _, err := Load(path); err != nil {
		t.Errorf("the downloaded file does not load: %v", err)
	}
	if auth := fh.auth.Load(); auth != "" {
		t.Errorf("Authorization %q sent without a token", auth)
	}
	// The second time comes from the cache, even with the Hub gone.
	fh.Close()
	again, downloaded, err := h.Resolve(context.Background(), "Org/Tiny", "main")
	if err != nil || again != path || downloaded {
		t.Errorf("second resolve: %q, %v; want %q from the cache", again, err, path)
	}
	if n := fh.requests.Load(); n != 1 {
		t.Errorf("%d requests to the Hub, want 1", n)
	}
}

func TestHubRevision(t *testing.T) {
	fh := newFakeHub(t)
	h := fh.hub(t)
	path, _, err := h.Resolve(context.Background(), "Org/Tiny", "v1")
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(h.Cache, "models--Org--Tiny")
	if want := filepath.Join(repo, "snapshots", hubTagged, "tokenizer.json"); path != want {
		t.Errorf("path %s, want %s", path, want)
	}
	if ref, err := os.ReadFile(filepath.Join(repo, "refs", "v1")); err != nil || string(ref) != hubTagged {
		t.Errorf("refs/v1: %q, %v; want %s", ref, err, hubTagged)
	}
	if _, err := os.Stat(filepath.Join(repo, "refs", "main")); err == nil {
		t.Error("refs/main written for revision v1")
	}
	// A commit id is its own snapshot: found without a ref, and no ref is
	// written for it.
	fh.Close()
	if got, _, err := h.Resolve(context.Background(), "Org/Tiny", hubTagged); err != nil || got != path {
		t.Errorf("revision %s: %q, %v; want %q from the cache", hubTagged, got, err, path)
	}
	if _, _, err := h.Resolve(context.Background(), "Org/Tiny", "../../x"); !errors.Is(err, ErrHubRefused) {
		t.Errorf("revision ../../x: %v; want a refusal", err)
	}
}

// A large file is the Hub's redirect to a CDN: the commit and the blob's
// name come from the redirect, and the bearer token goes to the Hub.
func TestHubRedirectedFile(t *testing.T) {
	fh := newFakeHub(t)
	h := fh.hub(t)
	path, _, err := h.Resolve(context.Background(), "Org/Large", "")
	if err != nil {
		t.Fatal(err)
	}
	if link, err := os.Readlink(path); err != nil || filepath.Base(link) != strings.Repeat("ab", 32) {
		t.Errorf("snapshot link %q, %v; want the X-Linked-Etag blob", link, err)
	}
	if !strings.Contains(path, hubCommit) {
		t.Errorf("path %s lacks the redirect's commit", path)
	}
}

// A cache written by huggingface_hub is read without the network.
func TestHubReadsAnExistingCache(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "hub")
	repo := filepath.Join(cache, "models--Qwen--Qwen3-0.6B")
	tok, err := os.ReadFile(filepath.Join("testdata", "qwen2_tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"refs/main":                     hubCommit,
		"blobs/e1b2":                    string(tok),
		"snapshots/" + hubTagged + "/x": "", // another snapshot
	} {
		p := filepath.Join(repo, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	snap := filepath.Join(repo, "snapshots", hubCommit)
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../blobs/e1b2", filepath.Join(snap, "tokenizer.json")); err != nil {
		t.Fatal(err)
	}
	// HF_HUB_CACHE names the cache; else HF_HOME/hub is it.
	for _, env := range []map[string]string{
		{"HF_HUB_CACHE": cache, "HF_HUB_OFFLINE": "1"},
		{"HF_HOME": filepath.Dir(cache), "HF_ENDPOINT": "http://127.0.0.1:1"},
	} {
		h := HubFromEnv(func(k string) string { return env[k] })
		path, _, err := h.Resolve(context.Background(), "Qwen/Qwen3-0.6B", "")
		if want := filepath.Join(snap, "tokenizer.json"); err != nil || path != want {
			t.Errorf("%v: %q, %v; want %s", env, path, err, want)
		}
	}
}

func TestHubRefusals(t *testing.T) {
	fh := newFakeHub(t)
	for _, tc := range []struct {
		name, model, token string
		offline            bool
		say                string
	}{
		{"offline and not cached", "Org/Tiny", "", true, "HF_HUB_OFFLINE forbids downloading it"},
		{"no such model", "Org/Nope", "", false, "404 Not Found: check the model name"},
		{"gated without a token", "Org/Gated", "", false, "Access to model Org/Gated is restricted.): the model is gated or private, or there is no such model: set HF_TOKEN"},
		{"gated with a wrong token", "Org/Gated", "wrong", false, "HF_TOKEN was sent and refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := fh.requests.Load()
			h := fh.hub(t)
			h.Token, h.Offline = tc.token, tc.offline
			_, _, err := h.Resolve(context.Background(), tc.model, "")
			if !errors.Is(err, ErrHubRefused) || !strings.Contains(err.Error(), tc.say) {
				t.Errorf("error %v; want a refusal saying %q", err, tc.say)
			}
			if tc.offline && fh.requests.Load() != before {
				t.Error("offline, yet the Hub was asked")
			}
			if entries, _ := os.ReadDir(h.Cache); len(entries) != 0 {
				t.Errorf("a refusal left %d entries in the cache", len(entries))
			}
		})
	}
	// With the right token the gated model downloads, the token sent.
	h := fh.hub(t)
	h.Token = "secret"
	if _, _, err := h.Resolve(context.Background(), "Org/Gated", ""); err != nil {
		t.Errorf("gated model with its token: %v", err)
	}
	if auth := fh.auth.Load(); auth != "Bearer secret" {
		t.Errorf("Authorization %q, want the bearer token", auth)
	}
}

// No network is not the name's fault: it is no refusal, and says so.
func TestHubUnreachable(t *testing.T) {
	fh := newFakeHub(t)
	h := fh.hub(t)
	fh.Close()
	_, _, err := h.Resolve(context.Background(), "Org/Tiny", "")
	if err == nil || errors.Is(err, ErrHubRefused) || !strings.Contains(err.Error(), "check the network") {
		t.Errorf("error %v; want a network error that is no refusal", err)
	}
}

func TestIsHubName(t *testing.T) {
	for s, want := range map[string]bool{
		"Qwen/Qwen3-0.6B": true, "gpt2": true, "meta-llama/Llama-3.1-8B-Instruct": true,
		"./tok": false, "../models/qwen": false, "/abs/path": false, "a/b/c": false,
		"a--b/c": false, "a/b..c": false, strings.Repeat("x", 97): false, "tokenizer.json": false, "models/tok.json": false,
	} {
		if got := IsHubName(s); got != want {
			t.Errorf("IsHubName(%q) = %v, want %v", s, got, want)
		}
	}
}
