package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var digestLine = regexp.MustCompile(`Sequence digest: ([0-9a-f]{64}) \((\d+) requests, seed (\d+)\)`)

// bench runs `inferprobe bench` to completion and returns its exit status and output.
func bench(t *testing.T, args ...string) (int, string) {
	t.Helper()
	p := inferprobe(t, "inferprobe bench", t.TempDir(), append([]string{"bench", "--workers=2"}, args...)...)
	code := p.exitCode(t, 90*time.Second)
	return code, p.out.String()
}

// TestBenchDigestReproducible runs the AIPerf blog's Poisson command shape
// twice with one seed and once with another: equal seeds must print equal
// sequence digests, and another seed another digest; the two runs of one
// seed send request IDs of their own.
func TestBenchDigestReproducible(t *testing.T) {
	sim := freeAddr(t)
	startSimulator(t, sim)
	ids := map[string][]string{} // by artifact directory
	run := func(seed string) string {
		artifacts := t.TempDir()
		code, out := bench(t, "--artifact-dir", artifacts, "--model", "inferprobe-simulator", "--url", "http://"+sim,
			"--endpoint-type", "chat", "--streaming", "--request-rate", "20",
			"--synthetic-input-tokens-mean", "512", "--synthetic-input-tokens-stddev", "128",
			"--output-tokens-mean", "16", "--extra-inputs", "ignore_eos:true",
			"--random-seed", seed, "--request-count", "40")
		if code != 0 {
			t.Fatalf("bench exited %d:\n%s", code, out)
		}
		m := digestLine.FindStringSubmatch(out)
		if m == nil || m[2] != "40" || m[3] != seed {
			t.Fatalf("no digest line for 40 requests, seed %s:\n%s", seed, out)
		}
		if !strings.Contains(out, "40 ok, 0 errors") {
			t.Errorf("not every request succeeded:\n%s", out)
		}
		ids[seed] = append(ids[seed], requestIDs(t, artifacts)...)
		return m[1]
	}
	a, b, c := run("42"), run("42"), run("7")
	if a != b {
		t.Errorf("seed 42 gave digests %s and %s", a, b)
	}
	if sent := ids["42"]; len(sent) != 80 || len(slices.Compact(slices.Sorted(slices.Values(sent)))) != 80 {
		t.Errorf("two runs of seed 42 sent %d request IDs, %d of them distinct; want 80 of their own", len(sent), len(slices.Compact(slices.Sorted(slices.Values(sent)))))
	}
	if a == c {
		t.Errorf("seeds 42 and 7 gave the same digest %s", a)
	}
}

// requestIDs are the x_request_id of every line of a run's profile_export.jsonl.
func requestIDs(t *testing.T, artifacts string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(artifacts, "profile_export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for line := range strings.Lines(string(b)) {
		var l struct {
			Metadata struct {
				ID string `json:"x_request_id"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, l.Metadata.ID)
	}
	return ids
}

// TestBenchBadFlags: a bad value is reported against the flag the user typed.
func TestBenchBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "m", "--request-rate=-3"}, "inferprobe bench: --request-rate: must be > 0"},
		{[]string{"--model", "m", "--extra-inputs", "stream:false"}, "inferprobe bench: --extra-inputs.stream:"},
		{[]string{"--model", "m", "--request-count", "5", "--benchmark-grace-period", "3"}, "--benchmark-grace-period applies only after a --benchmark-duration"},
	} {
		code, out := bench(t, tc.args...)
		if code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("bench %v: exit %d, output %q; want exit 2 and %q", tc.args, code, out, tc.want)
		}
	}
}

// TestBenchAIPerfLoadFlags runs AIPerf's load options against the simulator:
// a rate ramp, request cancellation and a request count with a duration.
// Cancelled requests are counted cancelled, not as errors, the same seed
// cancels the same number, and cancelling leaves the digest of the run
// without it.
func TestBenchAIPerfLoadFlags(t *testing.T) {
	sim := freeAddr(t)
	startSimulator(t, sim)
	base := []string{"--model", "inferprobe-simulator", "--url", "http://" + sim, "--endpoint-type", "chat", "--streaming",
		"--request-rate", "40", "--request-rate-mode", "constant", "--request-rate-ramp-duration", "0.5",
		"--output-tokens-mean", "64", "--extra-inputs", "ignore_eos:true",
		"--request-count", "30", "--benchmark-duration", "60", "--random-seed", "3", "--progress", "off"}
	run := func(extra ...string) (digest, counts string) {
		code, out := bench(t, append(append([]string{}, base...), extra...)...)
		if code != 0 {
			t.Fatalf("bench exited %d:\n%s", code, out)
		}
		m := digestLine.FindStringSubmatch(out)
		c := regexp.MustCompile(`(\d+) ok, (\d+) errors, (\d+) cancelled`).FindStringSubmatch(out)
		if m == nil || m[2] != "30" || c == nil {
			t.Fatalf("no digest line for 30 requests, or no counts:\n%s", out)
		}
		if c[2] != "0" {
			t.Errorf("%s errors, want none:\n%s", c[2], out)
		}
		return m[1], c[0]
	}
	plain, plainCounts := run()
	if plainCounts != "30 ok, 0 errors, 0 cancelled" {
		t.Errorf("without cancellation: %s", plainCounts)
	}
	cancel := []string{"--request-cancellation-rate", "50", "--request-cancellation-delay", "0.005"}
	d1, c1 := run(cancel...)
	d2, c2 := run(cancel...)
	if c1 != c2 || c1 == plainCounts || strings.HasPrefix(c1, "0 ok") {
		t.Errorf("cancelling half of the requests gave %q, then %q", c1, c2)
	}
	if d1 != plain || d2 != plain {
		t.Errorf("digests %s, %s with cancellation, %s without; want one", d1, d2, plain)
	}
}
