package prober

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/inferprobe/inferprobe/scenarios"
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
}

// NewTarget prepares name's scenario target for requests.
func NewTarget(name string, t *scenarios.Target) (*Target, error) {
	c, ok := codecs[t.Endpoint]
	if !ok {
		return nil, fmt.Errorf("target %s: endpoint %q is not supported", name, t.Endpoint)
	}
	h := make(http.Header, len(t.Headers)+3)
	for k, v := range t.Headers {
		h.Set(k, v)
	}
	h.Set("Content-Type", "application/json")
	if t.APIKey != "" {
		h.Set("Authorization", "Bearer "+t.APIKey)
	}
	if t.Streaming() {
		h.Set("Accept", "text/event-stream")
	}
	return &Target{
		Name:         name,
		Model:        t.Model,
		Spec:         *t,
		url:          strings.TrimRight(t.URL, "/") + c.path(),
		codec:        c,
		header:       h,
		stream:       t.Streaming(),
		timeout:      time.Duration(t.Timeout),
		stallTimeout: time.Duration(t.StallTimeout),
	}, nil
}
