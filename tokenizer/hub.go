package tokenizer

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Hub finds a model's tokenizer.json in the local Hugging Face cache, and
// downloads it from the Hub into that cache when it is not there, in the
// layout huggingface_hub writes, so that Python tools find it too:
//
//	CACHE/models--ORG--NAME/refs/REVISION            the commit REVISION names
//	CACHE/models--ORG--NAME/snapshots/COMMIT/tokenizer.json -> ../../blobs/ETAG
//	CACHE/models--ORG--NAME/blobs/ETAG               the file
type Hub struct {
	Endpoint string       // the Hub, e.g. https://huggingface.co
	Token    string       // sent as a bearer token when set
	Cache    string       // the hub cache directory
	Offline  bool         // never download
	Client   *http.Client // nil: net/http's defaults, no timeout
}

// HubFromEnv is the Hub that huggingface_hub's environment variables
// describe (getenv is os.Getenv outside tests): HF_ENDPOINT, HF_TOKEN,
// HF_HUB_CACHE (else HF_HOME/hub, else XDG_CACHE_HOME/huggingface/hub,
// else ~/.cache/huggingface/hub) and HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE).
func HubFromEnv(getenv func(string) string) *Hub {
	h := &Hub{
		Endpoint: strings.TrimRight(getenv("HF_ENDPOINT"), "/"),
		Token:    getenv("HF_TOKEN"),
		Cache:    getenv("HF_HUB_CACHE"),
		Offline:  isTrue(getenv("HF_HUB_OFFLINE")) || isTrue(getenv("TRANSFORMERS_OFFLINE")),
		Client:   &http.Client{Timeout: 5 * time.Minute},
	}
	if h.Endpoint == "" {
		h.Endpoint = "https://huggingface.co"
	}
	if h.Cache == "" {
		home := getenv("HF_HOME")
		if home == "" {
			xdg := getenv("XDG_CACHE_HOME")
			if xdg == "" {
				xdg = filepath.Join(getenv("HOME"), ".cache")
			}
			home = filepath.Join(xdg, "huggingface")
		}
		h.Cache = filepath.Join(home, "hub")
	}
	return h
}

// isTrue reads a boolean environment variable as huggingface_hub does.
func isTrue(v string) bool {
	switch strings.ToUpper(v) {
	case "1", "ON", "YES", "TRUE":
		return true
	}
	return false
}

// hubName is a Hub repository id: NAME or ORG/NAME.
var hubName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)?$`)

// IsHubName reports whether s, which is no file, can be a Hub model name,
// as huggingface_hub validates one (no "--" or "..", at most 96 characters
// a part); a name ending in .json is taken for a missing file.
func IsHubName(s string) bool {
	if !hubName.MatchString(s) || strings.Contains(s, "--") || strings.Contains(s, "..") || strings.HasSuffix(s, ".json") {
		return false
	}
	for part := range strings.SplitSeq(s, "/") {
		if len(part) > 96 {
			return false
		}
	}
	return true
}

// ErrHubRefused marks a model name whose tokenizer.json cannot be had as
// things are set (offline and not cached; the Hub answered 401, 403 or
// 404): running again unchanged will not help. Its message says what to do.
var ErrHubRefused = errors.New("the Hugging Face Hub refused the tokenizer")

// refusal is an error that is ErrHubRefused, with its own message.
type refusal struct{ msg string }

func (r *refusal) Error() string        { return r.msg }
func (r *refusal) Is(target error) bool { return target == ErrHubRefused }

func refused(format string, a ...any) error { return &refusal{fmt.Sprintf(format, a...)} }

// maxTokenizerBytes bounds a download; the largest tokenizer.json files
// (large multilingual vocabularies) are tens of MB.
const maxTokenizerBytes = 512 << 20

const tokenizerFile = "tokenizer.json"

// commitHash is a full git commit id, which a revision may be.
var commitHash = regexp.MustCompile(`^[0-9a-f]{40}$`)

// Resolve returns the path of model's tokenizer.json at revision (a branch,
// tag or commit; "" is main): the cached one when the cache has it, else
// one it downloads into the cache (downloaded says so). Errors that are
// ErrHubRefused are the name's or the settings'; others (no network, the
// Hub failing) may pass.
func (h *Hub) Resolve(ctx context.Context, model, revision string) (path string, downloaded bool, err error) {
	if revision == "" {
		revision = "main"
	}
	if !IsHubName(model) {
		return "", false, refused("%q is not a Hugging Face model name (ORG/NAME)", model)
	}
	if strings.Contains(revision, "..") || strings.HasPrefix(revision, "/") || strings.ContainsAny(revision, "\\\x00") {
		return "", false, refused("revision %q is not a branch, tag or commit", revision)
	}
	repo := filepath.Join(h.Cache, "models--"+strings.ReplaceAll(model, "/", "--"))
	if path, ok := cached(repo, revision); ok {
		return path, false, nil
	}
	if h.Offline {
		return "", false, refused("%s (revision %s) has no tokenizer.json in the Hugging Face cache %s, and HF_HUB_OFFLINE forbids downloading it: unset HF_HUB_OFFLINE, or fetch it once (hf download %s tokenizer.json), or give a tokenizer.json path",
			model, revision, h.Cache, model)
	}
	path, err = h.download(ctx, model, revision, repo)
	return path, err == nil, err
}

// cached finds revision's tokenizer.json under repo, a model's cache folder.
func cached(repo, revision string) (string, bool) {
	commit := revision
	if !commitHash.MatchString(revision) {
		ref, err := os.ReadFile(filepath.Join(repo, "refs", filepath.FromSlash(revision)))
		if err != nil {
			return "", false
		}
		commit = strings.TrimSpace(string(ref))
	}
	path := filepath.Join(repo, "snapshots", commit, tokenizerFile)
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	return path, true
}

// download fetches model's tokenizer.json at revision and writes it into
// repo, its cache folder.
func (h *Hub) download(ctx context.Context, model, revision, repo string) (string, error) {
	u := h.Endpoint + "/" + model + "/resolve/" + url.PathEscape(revision) + "/" + tokenizerFile
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", fmt.Errorf("HF_ENDPOINT %s: %w", h.Endpoint, err)
	}
	req.Header.Set("User-Agent", "inferprobe")
	if h.Token != "" {
		req.Header.Set("Authorization", "Bearer "+h.Token)
	}
	// The Hub's own headers (the commit, the file's etag) are on its answer,
	// which for a large file is a redirect to a CDN; net/http drops the
	// Authorization header when a redirect leaves the Hub's host.
	var client http.Client
	if h.Client != nil {
		client = *h.Client
	}
	var hops []*http.Response
	client.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		hops = append(hops, r.Response)
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // it names the URL again
		}
		return "", fmt.Errorf("cannot download %s: %w; check the network (or HF_ENDPOINT), or give a tokenizer.json path", u, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized, http.StatusForbidden:
		fix := "the model is gated or private, or there is no such model: set HF_TOKEN to a token that may read it (for a gated model, accept its terms on its Hub page first)"
		if h.Token != "" {
			fix = "HF_TOKEN was sent and refused: check the name, and that the token may read the model (for a gated model, accept its terms on its Hub page first)"
		}
		return "", refused("%s answered %s%s: %s", u, resp.Status, hubMessage(resp), fix)
	case http.StatusNotFound:
		return "", refused("%s answered %s%s: check the model name and the revision; a model without a tokenizer.json needs one given as a path", u, resp.Status, hubMessage(resp))
	default:
		return "", fmt.Errorf("%s answered %s%s; try again later, or give a tokenizer.json path", u, resp.Status, hubMessage(resp))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenizerBytes+1))
	switch {
	case err != nil:
		return "", fmt.Errorf("downloading %s: %w", u, err)
	case len(data) > maxTokenizerBytes:
		return "", fmt.Errorf("%s is over %d MiB: not a tokenizer.json", u, maxTokenizerBytes>>20)
	case !json.Valid(data):
		return "", fmt.Errorf("%s is not JSON: not a tokenizer.json (is HF_ENDPOINT a Hugging Face Hub?)", u)
	}
	commit, etag := hubMeta(append(hops, resp))
	if commit == "" {
		if !commitHash.MatchString(revision) {
			return "", fmt.Errorf("%s sent no X-Repo-Commit header, so the commit of revision %s is unknown (is HF_ENDPOINT a Hugging Face Hub?)", u, revision)
		}
		commit = revision
	}
	if etag == "" {
		sum := sha256.Sum256(data)
		etag = hex.EncodeToString(sum[:])
	}
	path, err := store(repo, revision, commit, etag, data)
	if err != nil {
		return "", fmt.Errorf("writing %s into the Hugging Face cache: %w", model, err)
	}
	return path, nil
}

// hubMessage is the Hub's reason for a refusal, from its X-Error-Message
// header, as " (reason)", or "".
func hubMessage(resp *http.Response) string {
	if m := resp.Header.Get("X-Error-Message"); m != "" {
		return " (" + m + ")"
	}
	return ""
}

// hubMeta reads the commit and the file's etag from the first answer that
// carries X-Repo-Commit (the Hub's, not a CDN's), as huggingface_hub does.
func hubMeta(resps []*http.Response) (commit, etag string) {
	for _, r := range resps {
		if c := r.Header.Get("X-Repo-Commit"); c != "" {
			etag = r.Header.Get("X-Linked-Etag")
			if etag == "" {
				etag = r.Header.Get("ETag")
			}
			etag = strings.Trim(strings.TrimPrefix(etag, "W/"), `"`)
			if strings.ContainsAny(etag, `/\`) || etag == "." || etag == ".." {
				etag = "" // not a safe file name: the content's hash names the blob
			}
			return c, etag
		}
	}
	return "", ""
}

// store writes data into repo as huggingface_hub does: the blob, the
// snapshot's link to it (a copy where links cannot be made), and the ref
// naming the commit. Each file appears whole or not at all, so that runs
// in parallel and Python tools never read half of one.
func store(repo, revision, commit, etag string, data []byte) (string, error) {
	if !commitHash.MatchString(commit) {
		return "", fmt.Errorf("the Hub sent %q as the commit, not a commit id", commit)
	}
	blob := filepath.Join(repo, "blobs", etag)
	if err := writeAtomic(blob, data); err != nil {
		return "", err
	}
	snap := filepath.Join(repo, "snapshots", commit, tokenizerFile)
	if err := os.MkdirAll(filepath.Dir(snap), 0o755); err != nil {
		return "", err
	}
	tmp := snap + ".tmp" + randomSuffix()
	if err := os.Symlink(filepath.Join("..", "..", "blobs", etag), tmp); err == nil {
		if err := os.Rename(tmp, snap); err != nil {
			_ = os.Remove(tmp)
			return "", err
		}
	} else if err := writeAtomic(snap, data); err != nil {
		return "", err
	}
	if revision != commit {
		if err := writeAtomic(filepath.Join(repo, "refs", filepath.FromSlash(revision)), []byte(commit)); err != nil {
			return "", err
		}
	}
	return snap, nil
}

// writeAtomic writes data to path through a temporary file renamed over it.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".incomplete")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
