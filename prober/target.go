package prober

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/inferprobe/inferprobe/scenarios"
	"github.com/inferprobe/inferprobe/tokenizer"
)

// Target is a validated scenario target ready to receive requests.
type Target struct {
	Name  string
	Model string
	// Spec is the scenario definition the target was built from; a worker
	// process rebuilds the target from it.
	Spec         scenarios.Target
	url          string // full endpoint URL
	codec        codec
	header       http.Header
	stream       bool
	timeout      time.Duration
	stallTimeout time.Duration
	// tok counts tokens when the server reports no usage; nil without one.
	tok            *tokenizer.Tokenizer
	maxTokensField string
	sessionHeader  string // canonical, as the header's keys are
	// sendRequestID and sendTraceparent say which of a request's ID headers
	// go out: all unless the target turned them off (request_ids: false),
	// and never one the target's headers set themselves.
	sendRequestID, sendTraceparent bool
	conn                           connKey
	tls                            *tls.Config // nil: Go's defaults
	// byURL are the target at each of its base URLs (Spec.URL, then
	// Spec.MoreURLs), alike but for url; nil with one.
	byURL []*Target
}

// connKey is what sets a target's connections apart: targets with the same
// key share a transport and its idle connections.
type connKey struct {
	caFile              string
	insecure, h2, reuse bool
}

// NewTarget prepares name's scenario target for requests.
func NewTarget(name string, t *scenarios.Target) (*Target, error) {
	desc, c, err := lookupEndpoint(t)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", name, err)
	}
	stream := t.Streaming() && desc.Streams
	path := desc.PathFor(stream)
	if desc.NeedsTemplate {
		path = t.Template.Path
	}
	h := make(http.Header, len(t.Headers)+len(desc.Headers)+3)
	for k, v := range t.Headers {
		h.Set(k, v)
	}
	h.Set("Content-Type", "application/json")
	if t.APIKey != "" {
		h.Set(desc.APIKeyHeader, desc.APIKeyPrefix+t.APIKey)
	}
	for k, v := range desc.Headers {
		if h.Get(k) == "" {
			h.Set(k, v)
		}
	}
	if stream {
		h.Set("Accept", "text/event-stream")
	}
	ids := t.SendsRequestIDs()
	tg := &Target{
		Name:            name,
		Model:           t.Model,
		Spec:            *t,
		url:             strings.TrimRight(t.URL, "/") + path,
		codec:           c,
		header:          h,
		stream:          stream,
		timeout:         time.Duration(t.Timeout),
		stallTimeout:    time.Duration(t.StallTimeout),
		maxTokensField:  scenarios.MaxTokens,
		sessionHeader:   http.CanonicalHeaderKey(t.SessionHeaderName()),
		sendRequestID:   ids && h.Get(RequestIDHeader) == "",
		sendTraceparent: ids && h.Get(TraceparentHeader) == "",
		conn:            connKey{caFile: t.TLS.CAFile, insecure: t.TLS.InsecureSkipVerify, h2: t.UseHTTP2(), reuse: t.KeepsAlive()},
	}
	if t.MaxTokensField != "" {
		tg.maxTokensField = t.MaxTokensField
	}
	if t.Tokenizer != "" {
		if tg.tok, err = loadTokenizer(t.Tokenizer); err != nil {
			return nil, &fieldError{target: name, field: "tokenizer", err: err,
				hint: "; give the model's Hugging Face tokenizer.json (GPT-2, Llama 3 or Qwen2 kind), or remove tokenizer and rely on the server's usage"}
		}
	}
	if t.TLS != (scenarios.TLS{}) {
		tg.tls = &tls.Config{InsecureSkipVerify: t.TLS.InsecureSkipVerify} //nolint:gosec // an explicit, documented switch
		if t.TLS.CAFile != "" {
			if tg.tls.RootCAs, err = loadCAFile(t.TLS.CAFile); err != nil {
				return nil, &fieldError{target: name, field: "tls.ca_file", err: err}
			}
		}
	}
	if len(t.MoreURLs) > 0 {
		for _, u := range append([]string{t.URL}, t.MoreURLs...) {
			at := *tg // each of one URL, so ForURL of it is itself
			at.url, at.byURL = strings.TrimRight(u, "/")+path, nil
			tg.byURL = append(tg.byURL, &at)
		}
	}
	return tg, nil
}

// URLs is how many base URLs the target has: 1, or more when its requests
// take turns among several servers (AIPerf's several --url).
func (t *Target) URLs() int { return max(1, len(t.byURL)) }

// ForURL is the target at its base URL i (0 is Spec.URL); the same target
// with one URL.
func (t *Target) ForURL(i int) *Target {
	if t.byURL == nil {
		return t
	}
	return t.byURL[i%len(t.byURL)]
}

// TLSConfig returns a copy of the target's TLS settings (tls: in its
// config), nil when it has none: for another client reaching the same
// server, such as the engine-metrics scrape.
func (t *Target) TLSConfig() *tls.Config {
	if t.tls == nil {
		return nil
	}
	return t.tls.Clone()
}

// Tokenizer returns the target's tokenizer, nil when it has none.
func (t *Target) Tokenizer() *tokenizer.Tokenizer { return t.tok }

// tokenizers keeps loaded tokenizers by file, so that targets and reloads
// sharing one do not each parse (and hold) it again; a changed file is
// loaded anew.
var tokenizers struct {
	sync.Mutex
	m map[tokenizerKey]*tokenizer.Tokenizer
}

type tokenizerKey struct {
	path  string
	size  int64
	mtime time.Time
}

func loadTokenizer(path string) (*tokenizer.Tokenizer, error) {
	info, err := os.Stat(path)
	if err != nil && tokenizer.IsHubName(path) {
		// A model name: its tokenizer.json from the Hugging Face cache, or
		// downloaded into it (the first build; the workers' find it cached).
		if path, _, err = tokenizer.HubFromEnv(os.Getenv).Resolve(context.Background(), path, ""); err != nil {
			return nil, err
		}
		info, err = os.Stat(path)
	}
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	key := tokenizerKey{path, info.Size(), info.ModTime()}
	tokenizers.Lock()
	defer tokenizers.Unlock()
	if tok, ok := tokenizers.m[key]; ok {
		return tok, nil
	}
	tok, err := tokenizer.Load(path)
	if err != nil {
		return nil, err
	}
	if tokenizers.m == nil {
		tokenizers.m = map[tokenizerKey]*tokenizer.Tokenizer{}
	}
	for k := range tokenizers.m {
		if k.path == path {
			delete(tokenizers.m, k) // the file changed: drop the old one
		}
	}
	tokenizers.m[key] = tok
	return tok, nil
}
