package e2e

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// idRecorder is a proxy in front of the simulator that notes, for every
// request, the ID headers it came with and how long the simulator took: the
// server's side of the story, which the exemplars must agree with.
type idRecorder struct {
	mu   sync.Mutex
	seen map[string]sentRequest // by X-Request-ID
}

// delayLevel is the delay, in whole seconds, the simulator gave a request
// that took d.
func delayLevel(d time.Duration) int { return int(d.Round(time.Second) / time.Second) }

type sentRequest struct {
	traceparent string
	took        time.Duration
}

// forward passes each request on to the simulator at sim and its reply
// back, event by event, noting its ID headers and how long it took.
func (r *idRecorder) forward(t *testing.T, sim string) http.Handler {
	transport := &http.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		start := time.Now()
		out, err := http.NewRequest(req.Method, "http://"+sim+req.URL.RequestURI(), req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out.Header = req.Header.Clone()
		resp, err := transport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		maps.Copy(w.Header(), resp.Header)
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil {
					t.Logf("proxy: writing to inferprobe: %v", werr)
					return
				}
				w.(http.Flusher).Flush()
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Logf("proxy: reading from the simulator: %v", err)
				return
			}
		}
		if id := req.Header.Get("X-Request-ID"); id != "" {
			r.mu.Lock()
			r.seen[id] = sentRequest{traceparent: req.Header.Get("traceparent"), took: time.Since(start)}
			r.mu.Unlock()
		}
	})
}

// slowerThan returns the IDs of the requests that took longer than d.
func (r *idRecorder) slowerThan(d time.Duration) map[string]sentRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]sentRequest{}
	for id, s := range r.seen {
		if s.took > d {
			out[id] = s
		}
	}
	return out
}

func (r *idRecorder) get(id string) (sentRequest, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.seen[id]
	return s, ok
}

// promExemplar is one exemplar of query_exemplars, with its series' name.
type promExemplar struct {
	series string
	labels map[string]string
	value  float64
}

func (s *prometheusServer) exemplars(query string, start, end time.Time) ([]promExemplar, error) {
	var body struct {
		Status string `json:"status"`
		Data   []struct {
			SeriesLabels map[string]string `json:"seriesLabels"`
			Exemplars    []struct {
				Labels map[string]string `json:"labels"`
				Value  string            `json:"value"`
			} `json:"exemplars"`
		} `json:"data"`
	}
	q := url.Values{"query": {query}, "start": {strconv.FormatInt(start.Unix(), 10)}, "end": {strconv.FormatInt(end.Unix()+1, 10)}}
	if err := getJSON(s.url+"/api/v1/query_exemplars?"+q.Encode(), &body); err != nil {
		return nil, err
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("query_exemplars: status %q", body.Status)
	}
	var out []promExemplar
	for _, d := range body.Data {
		for _, e := range d.Exemplars {
			v, err := strconv.ParseFloat(e.Value, 64)
			if err != nil {
				return nil, err
			}
			out = append(out, promExemplar{series: d.SeriesLabels["__name__"], labels: e.Labels, value: v})
		}
	}
	return out, nil
}

// TestExemplarsNameSlowRequests delays a few requests on purpose (the
// simulator's TTFT raised to 1, 2 and 3 s in turn, each for about one
// request) and checks that a real Prometheus 3.16 with exemplar storage
// returns, for TTFT and request duration, exemplars that name exactly those
// requests by the IDs they were sent with.
func TestExemplarsNameSlowRequests(t *testing.T) {
	dir := t.TempDir()
	simAddr := freeAddr(t)
	startSimulator(t, simAddr)
	ids := &idRecorder{seen: map[string]sentRequest{}}
	front := httptest.NewServer(ids.forward(t, simAddr))
	defer front.Close()

	scenarioFile := filepath.Join(dir, "scenario.yml")
	if err := os.WriteFile(scenarioFile, []byte(fmt.Sprintf(`global: {seed: 17}
targets:
  sim:
    url: %s/v1
    model: inferprobe-simulator
    timeout: 10s
probes:
  steady:
    target: sim
    arrival: {pattern: constant, rate: 2}
    dataset:
      synthetic:
        input_tokens: {mean: 16}
        output_tokens: {mean: 8}
`, front.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	serve := inferprobe(t, "inferprobe serve", dir, "serve", "--config.file="+scenarioFile, "--web.listen-address="+addr)
	waitHealthy(t, serve, "http://"+addr+"/metrics", 10*time.Second)
	prom := runPrometheus(t, "prometheus 3.16", requirePrometheus316(t), fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  scrape_native_histograms: true
scrape_configs:
  - job_name: inferprobe
    static_configs:
      - targets: [%q]
`, addr), 60*time.Second, "--enable-feature=exemplar-storage", "--scrape.discovery-reload-interval=1s")
	start := time.Now()
	eventually(t, 30*time.Second, "Prometheus scrapes TTFT", func() error {
		v, err := prom.query("histogram_count(inferprobe_time_to_first_token_seconds)")
		if err != nil {
			return err
		}
		if len(v) == 0 {
			return fmt.Errorf("no native TTFT histogram yet")
		}
		return nil
	})

	setTTFT := func(d string) {
		t.Helper()
		resp, err := httpClient.Post("http://"+simAddr+"/admin/profile", "application/json", bytes.NewReader([]byte(`{"ttft":"`+d+`"}`)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("setting the simulator's TTFT to %s: HTTP %d", d, resp.StatusCode)
		}
	}
	// Distinct delays keep the slow exemplars apart on the log scale, where
	// client_golang thins a histogram's exemplars by evicting the closer of
	// two; requests keep the profile they started with.
	for _, d := range []string{"1s", "2s", "3s"} {
		setTTFT(d)
		time.Sleep(600 * time.Millisecond) // at 2 req/s, one request or two
	}
	setTTFT("20ms")
	var slow map[string]sentRequest
	eventually(t, 15*time.Second, "the delayed requests end", func() error {
		if slow = ids.slowerThan(900 * time.Millisecond); len(slow) < 3 {
			return fmt.Errorf("%d requests slower than 900ms so far", len(slow))
		}
		return nil
	})
	time.Sleep(4 * time.Second) // the last of them ends, and is scraped

	slow = ids.slowerThan(900 * time.Millisecond)
	for _, family := range []string{"inferprobe_time_to_first_token_seconds", "inferprobe_request_duration_seconds"} {
		eventually(t, 20*time.Second, family+" exemplars name every delayed request", func() error {
			exs, err := prom.exemplars(family, start, time.Now())
			if err != nil {
				return err
			}
			found := map[int]bool{} // delays named
			for _, e := range exs {
				id, trace := e.labels["request_id"], e.labels["trace_id"]
				sent, ok := ids.get(id)
				if !ok {
					t.Fatalf("%s: exemplar %v names a request the server never saw", family, e.labels)
				}
				if trace != strings.ReplaceAll(id, "-", "") || !strings.Contains(sent.traceparent, "-"+trace+"-") {
					t.Fatalf("%s: exemplar %v: trace ID is not the request's (traceparent %q)", family, e.labels, sent.traceparent)
				}
				_, isSlow := slow[id]
				if (e.value > 0.9) != isSlow {
					t.Fatalf("%s: exemplar of %s at %.3fs, but the server took %v", family, id, e.value, sent.took)
				}
				if isSlow {
					found[delayLevel(sent.took)] = true
				}
			}
			// One or two requests take each delay, and client_golang keeps
			// only one of two exemplars that close together: every delay
			// must be named by one of its requests.
			levels := map[int]bool{}
			for _, r := range slow {
				levels[delayLevel(r.took)] = true
			}
			if len(found) != len(levels) {
				return fmt.Errorf("%d exemplars, naming requests of %d of the %d delays (%d delayed requests)", len(exs), len(found), len(levels), len(slow))
			}
			return nil
		})
	}
}
