package simulator

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestAdminProfile(t *testing.T) {
	initial := Profile{TTFT: 100 * time.Millisecond, ITL: 10 * time.Millisecond, Jitter: 0.2}
	s, ts := newTestServer(t, Config{Profile: initial})
	url := ts.URL + "/admin/profile"

	code, out := do(t, http.MethodGet, url, nil)
	if code != http.StatusOK {
		t.Fatalf("GET status %d", code)
	}
	want := initial
	want.Distribution = Constant // spelled out
	if got := decode[Profile](t, out); got != want {
		t.Errorf("GET = %+v, want %+v", got, want)
	}
	if !strings.Contains(string(out), `"ttft":"100ms"`) {
		t.Errorf("durations not written as Go duration strings: %s", out)
	}

	// Partial updates change only the fields given, by PUT or POST.
	code, out = do(t, http.MethodPut, url, `{"ttft":"250ms","distribution":"lognormal"}`)
	if code != http.StatusOK {
		t.Fatalf("PUT status %d: %s", code, out)
	}
	want.TTFT, want.Distribution = 250*time.Millisecond, LogNormal
	if got := decode[Profile](t, out); got != want || s.Profile() != want {
		t.Errorf("after PUT: response %+v, server %+v, want %+v", got, s.Profile(), want)
	}
	code, out = do(t, http.MethodPost, url, `{"error_rate":0.5,"stall_rate":0.1,"stall_duration":"2s"}`)
	if code != http.StatusOK {
		t.Fatalf("POST status %d: %s", code, out)
	}
	want.ErrorRate, want.StallRate, want.StallDuration = 0.5, 0.1, 2*time.Second
	if s.Profile() != want {
		t.Errorf("after POST: %+v, want %+v", s.Profile(), want)
	}

	for _, tc := range []struct{ body, wantMsg string }{
		{`{"bogus":1}`, `unknown field "bogus"`},
		{`{"ttft":"100ms","TTFT":"1s"}`, `unknown field "TTFT"`},
		{`{"ttft":5}`, `field "ttft": want a Go duration string`},
		{`{"itl":"fast"}`, `field "itl"`},
		{`{"jitter":"high"}`, `field "jitter"`},
		{`{"ttft":"-1s"}`, "ttft must not be negative"},
		{`{"error_rate":1.5}`, "error_rate must be a fraction between 0 and 1"},
		{`{"distribution":"uniform"}`, "distribution must be one of constant, normal, lognormal"},
		{`{"stall_duration":"0s"}`, "stall_rate > 0 needs a stall_duration > 0"},
		{`[1]`, "a profile must be a JSON object"},
		{`{"ttft":"1s"} {}`, "invalid"},
	} {
		code, out := do(t, http.MethodPut, url, tc.body)
		if code != http.StatusBadRequest {
			t.Errorf("PUT %s: status %d, want 400", tc.body, code)
			continue
		}
		checkAPIError(t, out, 400, "invalid_request_error", tc.wantMsg)
		if s.Profile() != want {
			t.Errorf("PUT %s changed the profile to %+v", tc.body, s.Profile())
		}
	}
}

func TestProfileJSONRoundTrip(t *testing.T) {
	p := Profile{TTFT: time.Second, PrefillPerToken: time.Microsecond, ITL: 3 * time.Millisecond, Distribution: Normal,
		Jitter: 0.3, ErrorRate: 0.01, StallRate: 0.02, StallDuration: 4 * time.Second}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	// Every field written is one UnmarshalJSON knows.
	var fields map[string]any
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	want := []string{"distribution", "error_rate", "itl", "jitter", "prefill_per_token", "stall_duration", "stall_rate", "ttft"}
	if got := slices.Sorted(maps.Keys(fields)); !slices.Equal(got, want) {
		t.Errorf("fields %v, want %v", got, want)
	}
	var q Profile
	if err := json.Unmarshal(b, &q); err != nil || q != p {
		t.Errorf("round trip: %+v, %v; want %+v", q, err, p)
	}
}

func TestSetProfile(t *testing.T) {
	s, err := New(Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetProfile(Profile{ITL: -time.Second, ErrorRate: 2}); err == nil ||
		!strings.Contains(err.Error(), "itl") || !strings.Contains(err.Error(), "error_rate") {
		t.Errorf("SetProfile of a bad profile: %v, want both problems named", err)
	}
	if err := s.SetProfile(Profile{ITL: time.Second}); err != nil {
		t.Fatal(err)
	}
	if got := s.Profile(); got.ITL != time.Second || got.Distribution != Constant {
		t.Errorf("Profile() = %+v", got)
	}
}
