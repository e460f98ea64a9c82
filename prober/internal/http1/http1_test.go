package http1

import (
	"net/http"
	"net/url"
	"testing"
)

// TestEligible: plain HTTP, and HTTPS without HTTP/2, take this client;
// HTTPS with HTTP/2, a proxy, or a user in the URL take net/http.
func TestEligible(t *testing.T) {
	noProxy := func(*http.Request) (*url.URL, error) { return nil, nil }
	proxy := func(*http.Request) (*url.URL, error) { return url.Parse("http://proxy.invalid:3128") }
	for _, tc := range []struct {
		url     string
		h2      bool
		proxied bool
		want    bool
	}{
		{"http://127.0.0.1:8000/v1/chat/completions", false, false, true},
		{"http://127.0.0.1:8000/v1/chat/completions", true, false, true}, // HTTP/2 is for TLS only
		{"https://engine.example:8443/v1/chat/completions", false, false, true},
		{"https://engine.example:8443/v1/chat/completions", true, false, false},
		{"http://engine.example/v1/chat/completions", false, true, false},
		{"https://engine.example/v1/chat/completions", false, true, false},
		{"http://user:secret@engine.example/v1/chat/completions", false, false, false},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		p := noProxy
		if tc.proxied {
			p = proxy
		}
		if got := Eligible(u, tc.h2, p); got != tc.want {
			t.Errorf("%s, HTTP/2 %v, proxy %v: this client %v, want %v", tc.url, tc.h2, tc.proxied, got, tc.want)
		}
	}
}
