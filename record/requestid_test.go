package record

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestRequestIDFormat(t *testing.T) {
	id := NewRequestID(42, 1, "a", 7)
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	if !uuid.MatchString(id.String()) {
		t.Errorf("request ID %q is not a version 8 UUID", id)
	}
	if got, want := strings.ReplaceAll(id.String(), "-", ""), id.TraceID(); got != want {
		t.Errorf("request ID %s is not the trace ID %s", got, want)
	}
	traceparent := regexp.MustCompile(`^00-[0-9a-f]{32}-[0-9a-f]{16}-01$`)
	if tp := id.Traceparent(); !traceparent.MatchString(tp) || !strings.Contains(tp, id.TraceID()) {
		t.Errorf("traceparent %q is malformed or lacks trace ID %s", tp, id.TraceID())
	}
	for _, other := range []RequestID{NewRequestID(43, 1, "a", 7), NewRequestID(42, 1, "b", 7), NewRequestID(42, 1, "a", 8), NewRequestID(42, 2, "a", 7)} {
		if other.Trace == id.Trace || other.Span == id.Span {
			t.Errorf("%s shares a trace or span ID with %s", other.Traceparent(), id.Traceparent())
		}
	}
}

// TestRequestIDDocumented: the example of the documented derivation is
// what NewRequestID gives, so a user who follows the documentation
// regenerates the IDs sent.
func TestRequestIDDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	run, err := ParseRunID("5eed0123456789ab")
	if err != nil {
		t.Fatal(err)
	}
	id := NewRequestID(42, run, "bench", 3)
	text := strings.Join(strings.Fields(string(doc)), " ")
	for _, want := range []string{"X-Request-ID: " + id.String(), "traceparent: " + id.Traceparent()} {
		if !strings.Contains(text, want) {
			t.Errorf("docs/configuration.md's example of a request ID lacks %q", want)
		}
	}
	if got := run.String(); got != "5eed0123456789ab" {
		t.Errorf("run ID prints as %s", got)
	}
}
