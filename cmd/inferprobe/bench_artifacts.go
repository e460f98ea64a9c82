package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/report/export"
)

// exportConfig is the run's configuration for the artifacts; it never
// carries the API key.
// exportConfig is the run's configuration for the artifacts, limit the
// length it was given; it never carries the API key.
func (f *benchFlags) exportConfig(limit prober.Limit) export.Config {
	base, _ := baseURL(f.url, f.endpointType) // validated before the run
	c := export.Config{
		Model: f.model, EndpointType: f.endpointType, Streaming: f.streaming, URL: base, Seed: f.seed,
		RequestCount: int(limit.Requests), Duration: limit.Duration.Seconds(), Command: repeatCommand(f.args),
	}
	if *f.set["request-rate"] {
		c.RequestRate, c.ArrivalPattern = f.requestRate, f.arrivalPattern
	}
	if *f.set["concurrency"] || !*f.set["request-rate"] {
		c.Concurrency = max(f.concurrency, 1)
	}
	return c
}

var unsafePath = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// defaultArtifactDir is AIPerf's artifacts/MODEL-ENDPOINT-LOAD naming, e.g.
// artifacts/Qwen_Qwen3-0.6B-chat-concurrency1.
func defaultArtifactDir(f *benchFlags) string {
	load := "concurrency" + strconv.Itoa(max(f.concurrency, 1))
	switch {
	case *f.set["request-rate"]:
		load = "request_rate" + strconv.FormatFloat(f.requestRate, 'f', -1, 64)
	case f.replays():
		load = "fixed_schedule"
	}
	return filepath.Join("artifacts", unsafePath.ReplaceAllString(f.model, "_")+"-"+f.endpointType+"-"+load)
}

// sensitiveHeader reports whether a header's value is likely a credential.
func sensitiveHeader(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"authorization", "key", "token", "secret", "cookie", "password"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// secrets are the credentials the run sends: the API key and the values of
// credential headers, and the token in each (the key of "Bearer KEY").
func (f *benchFlags) secrets() []string {
	var out []string
	add := func(v string) {
		if v = strings.TrimSpace(v); len(v) >= 4 {
			out = append(out, v)
		}
	}
	add(f.apiKey)
	for _, h := range f.headers {
		name, v, ok := strings.Cut(h, ":")
		if !ok || !sensitiveHeader(name) {
			continue
		}
		add(v)
		for _, w := range strings.Fields(v) {
			if len(w) >= 8 { // not the scheme word (Bearer, Basic)
				add(w)
			}
		}
	}
	return out
}

// repeatCommand is the command line that repeats the run, without the API
// key (it comes from INFERPROBE_API_KEY) and with credential headers
// redacted.
func repeatCommand(args []string) string {
	out := []string{"inferprobe"}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--api-key":
			i++
			continue
		case strings.HasPrefix(a, "--api-key="):
			continue
		case a == "-H" || a == "--header":
			if i+1 < len(args) {
				out = append(out, a, shellQuote(redactHeader(args[i+1])))
				i++
				continue
			}
		case strings.HasPrefix(a, "--header="):
			a = "--header=" + redactHeader(strings.TrimPrefix(a, "--header="))
		case strings.HasPrefix(a, "-H") && len(a) > 2:
			a = "-H" + redactHeader(a[2:])
		}
		out = append(out, shellQuote(a))
	}
	return strings.Join(out, " ")
}

func redactHeader(h string) string {
	if name, _, ok := strings.Cut(h, ":"); ok && sensitiveHeader(name) {
		return name + ": REDACTED"
	}
	return h
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:=,+@%-]+$`)

func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
