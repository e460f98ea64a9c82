package e2e

import (
	"bufio"
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestBenchAIPerfUserCentricAndPrefill runs AIPerf 0.13's user-centric
// rate and prefill concurrency command lines twice against one simulator,
// with `aiperf profile` and with `inferprobe bench`, and compares what the
// options decide from each run's profile_export.jsonl: the requests sent,
// how the sessions are cut among the users alive at the start, and how
// many requests wait for their first token at once.
func TestBenchAIPerfUserCentricAndPrefill(t *testing.T) {
	venv := requireAIPerf(t)
	addr := freeAddr(t)
	// Decoding 8 tokens (70 ms) outlasts the first token (30 ms), so that
	// requests past their first token are in flight beside those waiting.
	sim := inferprobe(t, "inferprobe simulate", t.TempDir(), "simulate", "--web.listen-address="+addr,
		"--sim.model=m", "--sim.ttft=30ms", "--sim.itl=10ms")
	waitHealthy(t, sim, "http://"+addr+"/health", 10*time.Second)
	// AIPerf loads the tokenizer from a directory of ours: no Hub.
	work, tok := t.TempDir(), qwenTokenizerDir(t)
	common := "-m m --url " + addr + " --streaming --osl 8 --isl 16 --tokenizer " + tok + " --ui none --request-count 12"
	run := func(t *testing.T, name, args string) []loadRequest {
		t.Helper()
		dir := filepath.Join(work, strings.ReplaceAll(t.Name(), "/", "_")+"-"+name)
		full := append(shellWords(t, common+" "+args), "--output-artifact-dir", dir)
		if name == "aiperf" {
			runAIPerf(t, 4*time.Minute, []string{"HOME=" + t.TempDir()}, filepath.Join(venv, "bin", "aiperf"), append([]string{"profile"}, full...)...)
		} else if code, out := benchIn(t, work, full...); code != 0 {
			t.Fatalf("bench exited %d:\n%s", code, out)
		}
		return readLoadRequests(t, filepath.Join(dir, "profile_export.jsonl"))
	}

	t.Run("user-centric rate", func(t *testing.T) {
		// 3 users at 10 requests/s share a turn gap of 300 ms; with 3 turns
		// a conversation, AIPerf starts them with 3, 2 and 1 turns left,
		// 100 ms apart, and the first new user (3 turns) once the one with
		// 1 turn is done.
		const args = "--user-centric-rate 10 --num-users 3 --session-turns-mean 3"
		for _, name := range []string{"aiperf", "bench"} {
			recs := run(t, name, args)
			if len(recs) != 12 {
				t.Fatalf("%s sent %d requests, want 12", name, len(recs))
			}
			sessions := bySession(recs)
			var turns []int
			for _, s := range sessions[:4] {
				turns = append(turns, len(s))
			}
			// The twelfth request is the fourth user's last turn, 100 ms
			// before the next is due: a late send may cut it in AIPerf.
			t.Logf("%s: the first four users sent %v turns", name, turns)
			if !slices.Equal(turns[:3], []int{3, 2, 1}) || turns[3] < 2 {
				t.Errorf("%s: the first four users sent %v turns, want [3 2 1 3]", name, turns)
			}
			for _, s := range sessions {
				for i := 1; i < len(s); i++ {
					// Each turn is due 300 ms after the one before was due;
					// late sends make a gap shorter than that, but never by
					// as much as half.
					if gap := s[i].start - s[i-1].start; gap < 150*time.Millisecond {
						t.Errorf("%s: session %s turn %d sent %v after the turn before, want about 300ms", name, s[i].session, i+1, gap)
					}
				}
			}
		}
	})

	t.Run("prefill concurrency", func(t *testing.T) {
		const args = "--concurrency 6 --prefill-concurrency 2"
		for _, name := range []string{"aiperf", "bench"} {
			recs := run(t, name, args)
			if len(recs) != 12 {
				t.Fatalf("%s sent %d requests, want 12", name, len(recs))
			}
			waiting, inFlight := peaks(recs)
			t.Logf("%s: at most %d waiting for a first token, %d in flight", name, waiting, inFlight)
			if waiting != 2 || inFlight <= 2 {
				t.Errorf("%s: %d requests waited for their first token at once and %d were in flight; want 2, and more in flight", name, waiting, inFlight)
			}
		}
	})
}

// loadRequest is what the comparison reads of a profile_export.jsonl line.
type loadRequest struct {
	session    string
	start, end time.Duration // from the epoch
	ttft       time.Duration
}

func readLoadRequests(t *testing.T, path string) []loadRequest {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []loadRequest
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Metadata struct {
				Session string `json:"x_correlation_id"`
				Start   int64  `json:"request_start_ns"`
				End     int64  `json:"request_end_ns"`
			} `json:"metadata"`
			Metrics struct {
				TTFT struct{ Value float64 } `json:"time_to_first_token"`
			} `json:"metrics"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		m := line.Metadata
		out = append(out, loadRequest{session: m.Session, start: time.Duration(m.Start), end: time.Duration(m.End),
			ttft: time.Duration(line.Metrics.TTFT.Value * float64(time.Millisecond))})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// bySession groups the requests by session, each in the order sent, the
// sessions by their first request.
func bySession(recs []loadRequest) [][]loadRequest {
	slices.SortFunc(recs, func(a, b loadRequest) int { return cmp.Compare(a.start, b.start) })
	index := map[string]int{}
	var out [][]loadRequest
	for _, r := range recs {
		i, ok := index[r.session]
		if !ok {
			i = len(out)
			index[r.session] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], r)
	}
	return out
}

// peaks returns the most requests that were waiting for their first token
// at once, and the most in flight.
func peaks(recs []loadRequest) (waiting, inFlight int) {
	type event struct {
		at    time.Duration
		delta int
	}
	peak := func(events []event) int {
		// Ends before starts at one instant: a slot freed is taken again.
		slices.SortFunc(events, func(a, b event) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.delta, b.delta)) })
		n, most := 0, 0
		for _, e := range events {
			n += e.delta
			most = max(most, n)
		}
		return most
	}
	var w, f []event
	for _, r := range recs {
		w = append(w, event{r.start, 1}, event{r.start + r.ttft, -1})
		f = append(f, event{r.start, 1}, event{r.end, -1})
	}
	return peak(w), peak(f)
}
