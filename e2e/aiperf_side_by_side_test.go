package e2e

import (
	"bytes"
	"encoding/base64"
	bin "encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// sideBySide are AIPerf 0.13 command lines, the words after `aiperf profile` with {url} for the
// simulator's address, that real AIPerf and bench both run against the same simulator: the
// request bodies each writes to inputs.json must agree in shape. One case per option AIPerf's
// docs use that bench once refused or ran differently; options that do not interact share a line,
// as AIPerf's start-up is most of a case's time.
var sideBySide = []struct{ name, args string }{
	{"full endpoint URL, a rate series, no --osl", `-m Qwen/Qwen3-0.6B --url http://{url}/v1/chat/completions --endpoint-type chat --streaming --request-rate-series series.json --request-rate-mode constant --request-count 4`},
	{"sequence distribution", `-m Qwen/Qwen3-0.6B --url {url} --streaming --seq-dist "64|10,32|8:70;256|40,128|20:20;1024|100,512|50:10" --request-count 6`},
	{"random range ratio, shared system prompt and user context", `-m Qwen/Qwen3-0.6B --url {url} --streaming --isl 100 --osl 16 --random-range-ratio 0.5 --shared-system-prompt-length 20 --user-context-prompt-length 10 --request-count 3`},
	{"multi-turn conversations", `-m Qwen/Qwen3-0.6B --url {url} --streaming --conversation-num 2 --conversation-turn-mean 3 --conversation-turn-stddev 0 --osl 8`},
	{"multi-turn with images and audio", `-m Qwen/Qwen3-0.6B --url {url} --streaming --conversation-num 2 --conversation-turn-mean 2 --conversation-turn-stddev 0 --osl 8 --image-width-mean 16 --image-height-mean 16 --audio-length-mean 0.1`},
	{"mp3 audio", `-m Qwen/Qwen3-0.6B --url {url} --streaming --audio-length-mean 0.3 --audio-format mp3 --audio-sample-rates 16 --audio-num-channels 2 --request-count 3 --osl 8`},
	{"mooncake trace detected without its type", `-m Qwen/Qwen3-0.6B --url {url} --streaming --input-file trace.jsonl`},
	{"single-turn file without a request count", `-m Qwen/Qwen3-0.6B --url {url} --streaming --input-file prompts.jsonl --custom-dataset-type single_turn`},
	{"single-turn file with images and audio", `-m Qwen/Qwen3-0.6B --url {url} --streaming --input-file media.jsonl --custom-dataset-type single_turn --osl 8`},
	{"images from a directory, cycled in name order", `-m Qwen/Qwen3-0.6B --url {url} --streaming --image-width-mean 32 --image-height-mean 24 --image-source images --image-source-sampling sequential-cycle --request-count 3 --osl 8`},
	// One key: AIPerf 0.13 cuts an --extra-inputs value at its first comma,
	// so a template with two keys does not render JSON there.
	{"template endpoint, inline payload_template", `-m Qwen/Qwen3-0.6B --url http://{url}/v1/completions --endpoint-type template --extra-inputs payload_template:'{"prompt": {{ text|tojson }}}' --extra-inputs response_field:'choices[0].text' --isl 32 --osl 8 --request-count 3`},
	{"cohere rerank, bare host", `-m Qwen/Qwen3-0.6B --url {url} --endpoint-type cohere-rankings --request-count 3`},
	{"rankings options", `-m Qwen/Qwen3-0.6B --url {url} --endpoint-type nim-rankings --rankings-passages-mean 3 --rankings-passages-stddev 0 --rankings-passages-prompt-token-mean 32 --rankings-query-prompt-token-mean 16 --request-count 3`},
}

// comparedOnTheWire are the cases of sideBySide whose bodies are compared as sent, through a
// recording proxy, instead of in inputs.json: a conversation's later turns, whose history AIPerf
// adds as it sends them while its inputs.json lists each turn alone (bench's lists the requests
// as sent).
var comparedOnTheWire = map[string]bool{"multi-turn with images and audio": true}

// TestAIPerfSideBySide runs each of sideBySide with real AIPerf 0.13 and with bench, only the
// program name changed (and the artifact directory), both with the same local tokenizer, and
// compares what they sent: as many requests (profile_export.jsonl), and in inputs.json the same
// turns per session, the same request body shape (keys, nesting and JSON types; the prompts'
// words differ, as each draws its own text) and the same numbers of passages per ranking request.
func TestAIPerfSideBySide(t *testing.T) {
	if testing.Short() {
		t.Skip("runs AIPerf once a case, tens of seconds each")
	}
	venv := requireAIPerf(t)
	url := startBlogSimulator(t)
	work := t.TempDir()
	tok := qwenTokenizerDir(t)
	var trace strings.Builder
	for i := range 4 {
		fmt.Fprintf(&trace, `{"timestamp": %d, "input_length": %d, "output_length": 8, "hash_ids": [%d]}`+"\n", 50*i, 64+i, i)
	}
	prompts := "{\"text\": \"a prompt about the sea\"}\n{\"text\": \"another about the hills\"}\n{\"text\": \"a third\"}\n"
	for name, s := range map[string]string{"trace.jsonl": trace.String(), "prompts.jsonl": prompts, "series.json": `{"points": [{"time_s": 0, "qps": 20}, {"time_s": 0.5, "qps": 60}]}`} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeSourceImages(t, filepath.Join(work, "images"))
	writeMediaEntries(t, work)
	// AIPerf's start-up is most of a case's time, so cases run side by side, a few at once (each
	// AIPerf is a dozen processes; concurrent runs take their own IPC paths).
	slots := make(chan struct{}, 3)
	for i, tc := range sideBySide {
		wire := comparedOnTheWire[tc.name]
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			slots <- struct{}{}
			defer func() { <-slots }()
			aiperfURL, benchURL := url, url
			var aiperfSent, benchSent *sentBodies
			if wire {
				aiperfURL, aiperfSent = recordingProxy(t, url)
				benchURL, benchSent = recordingProxy(t, url)
			}
			args := func(url string) []string {
				return append(shellWords(t, strings.ReplaceAll(tc.args, "{url}", url)), "--tokenizer", tok, "--ui-type", "none")
			}
			aiperfDir, benchDir := fmt.Sprintf("aiperf-%d", i), fmt.Sprintf("bench-%d", i)
			runAIPerfIn(t, work, 3*time.Minute, []string{"HOME=" + t.TempDir()}, filepath.Join(venv, "bin", "aiperf"), append([]string{"profile"}, append(args(aiperfURL), "--output-artifact-dir", aiperfDir)...)...)
			if code, out := benchIn(t, work, append(args(benchURL), "--output-artifact-dir", benchDir)...); code != 0 {
				t.Fatalf("bench exit %d:\n%s", code, out)
			}
			if wire {
				if got, want := benchSent.shapes(t), aiperfSent.shapes(t); !slices.Equal(got, want) {
					t.Errorf("the bodies sent differ in shape:\nbench:  %s\nAIPerf: %s", strings.Join(got, "\n        "), strings.Join(want, "\n        "))
				}
			}
			if got, want := exportedRequests(t, filepath.Join(work, benchDir)), exportedRequests(t, filepath.Join(work, aiperfDir)); got != want {
				t.Errorf("requests: bench %d, AIPerf %d", got, want)
			}
			want, ok := readInputs(t, filepath.Join(work, aiperfDir))
			if !ok {
				// AIPerf writes no inputs.json for a trace it sends at a load.
				return
			}
			got, ok := readInputs(t, filepath.Join(work, benchDir))
			if !ok {
				t.Fatal("bench wrote no inputs.json")
			}
			if !slices.Equal(got.turns, want.turns) {
				t.Errorf("turns per session: bench %v, AIPerf %v", got.turns, want.turns)
			}
			if !slices.Equal(got.passages, want.passages) {
				t.Errorf("passages per ranking request: bench %v, AIPerf %v", got.passages, want.passages)
			}
			if !wire && !slices.Equal(got.shapes, want.shapes) {
				t.Errorf("request bodies differ in shape:\nbench:  %s\nAIPerf: %s", strings.Join(got.shapes, "\n        "), strings.Join(want.shapes, "\n        "))
			}
			// From a source directory or a file's entries (solid images), the images
			// sent first, in order: both draw the same sizes and pick the same files
			// (AIPerf lists its dataset, bench the requests it sent, so the shorter
			// list is compared). Noise images differ pixel by pixel.
			n := min(len(got.images), len(want.images))
			if (strings.Contains(tc.args, "--image-source ") || strings.Contains(tc.args, "media.jsonl")) && (n == 0 || !slices.Equal(got.images[:n], want.images[:n])) {
				t.Errorf("images differ:\nbench:  %v\nAIPerf: %v", got.images, want.images)
			}
			if !strings.Contains(tc.args, "--image-") && !strings.Contains(tc.args, "media.jsonl") {
				return
			}
			// Images are counted per request as AIPerf counts them: every image part of
			// the body, a conversation's history's too.
			if got, want := exportedImages(t, filepath.Join(work, benchDir)), exportedImages(t, filepath.Join(work, aiperfDir)); !slices.Equal(got, want) {
				t.Errorf("num_images per request: bench %v, AIPerf %v", got, want)
			}
		})
	}
}

// sideBySideURLs are AIPerf 0.13 command lines with two --url, {a} and {b}, that AIPerf and
// bench run against two simulators: each new session goes to the next URL in turn and keeps it.
var sideBySideURLs = []struct {
	name, args string
	// perURL is the requests each server gets, warmup included.
	perURL [2]int
}{
	// A session of two turns stays on its URL: 4 and 2, where a request at a time would be 3 and 3.
	{"sessions keep their URL", `-m Qwen/Qwen3-0.6B --url {a} --url {b} --streaming --conversation-num 3 --conversation-turn-mean 2 --conversation-turn-stddev 0 --osl 8`, [2]int{4, 2}},
	// The warmup's request takes {a}, and the profiling phase goes on from {b} (one round robin
	// for both phases): 3 and 3, where starting again from {a} would be 4 and 2.
	{"one round robin through the warmup", `-m Qwen/Qwen3-0.6B --url {a} {b} --streaming --request-count 5 --warmup-request-count 1 --osl 8`, [2]int{3, 3}},
}

// TestAIPerfSideBySideURLs runs each of sideBySideURLs with real AIPerf 0.13 and with bench,
// each through its own recording proxy in front of each of two simulators, and compares the
// requests each server got; bench's profile_export.jsonl says which URL each went to.
func TestAIPerfSideBySideURLs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs AIPerf once a case, tens of seconds each")
	}
	venv := requireAIPerf(t)
	sims := [2]string{startBlogSimulator(t), startBlogSimulator(t)}
	work := t.TempDir()
	tok := qwenTokenizerDir(t)
	for i, tc := range sideBySideURLs {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Each tool's own proxies, so that each count is one tool's requests.
			run := func(tool string) (dir string, counts [2]int) {
				var sent [2]*sentBodies
				args := tc.args
				for j, sim := range sims {
					var addr string
					addr, sent[j] = recordingProxy(t, sim)
					args = strings.ReplaceAll(args, []string{"{a}", "{b}"}[j], addr)
				}
				dir = fmt.Sprintf("%s-urls-%d", tool, i)
				argv := append(shellWords(t, args), "--tokenizer", tok, "--ui-type", "none", "--output-artifact-dir", dir)
				if tool == "aiperf" {
					runAIPerfIn(t, work, 3*time.Minute, []string{"HOME=" + t.TempDir()}, filepath.Join(venv, "bin", "aiperf"), append([]string{"profile"}, argv...)...)
				} else if code, out := benchIn(t, work, argv...); code != 0 {
					t.Fatalf("bench exit %d:\n%s", code, out)
				}
				for j, s := range sent {
					s.mu.Lock()
					counts[j] = len(s.bodies)
					s.mu.Unlock()
				}
				return filepath.Join(work, dir), counts
			}
			_, aiperf := run("aiperf")
			benchDir, bench := run("bench")
			if aiperf != tc.perURL {
				t.Errorf("AIPerf sent %v requests to the two servers; the case expects %v", aiperf, tc.perURL)
			}
			if bench != aiperf {
				t.Errorf("requests per server: bench %v, AIPerf %v", bench, aiperf)
			}
			// The measured requests' url_index: the servers' counts less the warmup's.
			b, err := os.ReadFile(filepath.Join(benchDir, "profile_export.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			var exported [2]int
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var rec struct {
					Inferprobe struct {
						URLIndex *int `json:"url_index"`
					} `json:"inferprobe"`
				}
				if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Inferprobe.URLIndex == nil || *rec.Inferprobe.URLIndex > 1 {
					t.Fatalf("a record of bench's profile_export.jsonl has no url_index of the two (%v): %s", err, line)
				}
				exported[*rec.Inferprobe.URLIndex]++
			}
			if strings.Contains(tc.args, "--warmup-request-count 1") {
				exported[0]++ // the warmup's request, not exported, went to {a}
			}
			if exported != bench {
				t.Errorf("bench's export counts %v requests per url_index, the servers %v", exported, bench)
			}
		})
	}
}

// writeSourceImages writes a directory of small solid-colour PNG and JPEG
// images, for --image-source.
func writeSourceImages(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, c := range []color.RGBA{{200, 30, 30, 255}, {30, 200, 30, 255}, {30, 30, 200, 255}} {
		img := image.NewRGBA(image.Rect(0, 0, 48, 40))
		draw.Draw(img, img.Bounds(), image.NewUniform(c), image.Point{}, draw.Src)
		var buf bytes.Buffer
		name := fmt.Sprintf("%d.png", i)
		err := png.Encode(&buf, img)
		if i == 1 {
			name = fmt.Sprintf("%d.jpg", i)
			err = jpeg.Encode(&buf, img, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// writeMediaEntries writes media.jsonl, a single_turn file whose entries give images and audio
// in each form AIPerf's loader reads: a file path (PNG, JPEG, WAV), a URL, a data URL and
// "wav,BASE64"; it names writeSourceImages's files.
func writeMediaEntries(t *testing.T, dir string) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 20, 10))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.RGBA{200, 200, 30, 255}), image.Point{}, draw.Src)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	dataURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
	// A WAV of 160 silent 16-bit samples at 16 kHz.
	wav := make([]byte, 44+320)
	copy(wav, "RIFF")
	bin.LittleEndian.PutUint32(wav[4:], uint32(len(wav)-8))
	copy(wav[8:], "WAVEfmt ")
	bin.LittleEndian.PutUint32(wav[16:], 16)
	bin.LittleEndian.PutUint16(wav[20:], 1)
	bin.LittleEndian.PutUint16(wav[22:], 1)
	bin.LittleEndian.PutUint32(wav[24:], 16000)
	bin.LittleEndian.PutUint32(wav[28:], 32000)
	bin.LittleEndian.PutUint16(wav[32:], 2)
	bin.LittleEndian.PutUint16(wav[34:], 16)
	copy(wav[36:], "data")
	bin.LittleEndian.PutUint32(wav[40:], 320)
	if err := os.WriteFile(filepath.Join(dir, "clip.wav"), wav, 0o644); err != nil {
		t.Fatal(err)
	}
	lines := []string{
		`{"text": "describe the picture", "image": "images/0.png"}`,
		`{"text": "compare these", "images": ["images/1.jpg", "https://example.com/cat.png"]}`,
		`{"text": "and this one", "image": "` + dataURL + `"}`,
		`{"text": "transcribe this", "audio": "wav,` + base64.StdEncoding.EncodeToString(wav) + `"}`,
		`{"text": "look and listen", "image": "images/2.png", "audio": "clip.wav"}`,
	}
	if err := os.WriteFile(filepath.Join(dir, "media.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sentBodies are the request bodies a recordingProxy passed on.
type sentBodies struct {
	mu     sync.Mutex
	bodies [][]byte
}

// recordingProxy is a proxy to addr (host:port) that keeps the body of each chat or completions
// request it passes on; it returns its own host:port.
func recordingProxy(t *testing.T, addr string) (string, *sentBodies) {
	t.Helper()
	sent := &sentBodies{}
	proxy := httputil.NewSingleHostReverseProxy(&neturl.URL{Scheme: "http", Host: addr})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/completions") {
			sent.mu.Lock()
			sent.bodies = append(sent.bodies, body)
			sent.mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), sent
}

// shapes are the distinct shapes of the bodies sent, sorted, each with its messages in order, a
// role and a content shape each (a conversation's history), which shapeOf does not keep.
func (s *sentBodies) shapes(t *testing.T) []string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, b := range s.bodies {
		var body map[string]any
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatalf("a body sent is not a JSON object: %v", err)
		}
		sh := shapeOf(body)
		if msgs, ok := body["messages"].([]any); ok {
			var history []string
			for _, m := range msgs {
				m, _ := m.(map[string]any)
				history = append(history, fmt.Sprint(m["role"], ": ", shapeOf(m["content"])))
			}
			sh = "[" + strings.Join(history, "; ") + "] " + sh
		}
		if !slices.Contains(out, sh) {
			out = append(out, sh)
		}
	}
	slices.Sort(out)
	return out
}

// qwenTokenizerDir is a local tokenizer directory, as transformers and bench both load one,
// holding the Qwen2 tokenizer.json of tokenizer/testdata: no Hub is needed.
func qwenTokenizerDir(t *testing.T) string {
	t.Helper()
	tok, err := os.ReadFile(filepath.Join(repoRoot(t), "tokenizer", "testdata", "qwen2_tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, body := range map[string][]byte{
		"tokenizer.json":        tok,
		"tokenizer_config.json": []byte(`{"tokenizer_class": "Qwen2TokenizerFast"}`),
		"config.json":           []byte(`{"model_type": "qwen2"}`),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// inputs is what the test compares of an inputs.json: the distinct numbers of payloads a
// session has, and the distinct shapes of the payloads, each sorted. Not the number of
// sessions: AIPerf lists its dataset, each conversation once, and bench the requests it sent,
// which differ when a short file is cycled to the request count.
type inputs struct {
	turns  []int
	shapes []string
	// images are the payloads' images in order, each its size and its
	// centre pixel's colour to the nearest 64 (the test's images are solid).
	images []string
	// passages are the distinct numbers of passages a ranking payload carries (NIM's passages,
	// Cohere's documents, TEI's texts): the shapes do not count them.
	passages []int
}

// readInputs reads dir's inputs.json; ok is false when there is none.
func readInputs(t *testing.T, dir string) (in inputs, ok bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "inputs.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return in, false
	}
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Data []struct {
			Payloads []any `json:"payloads"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s/inputs.json: %v", dir, err)
	}
	for _, s := range doc.Data {
		if !slices.Contains(in.turns, len(s.Payloads)) {
			in.turns = append(in.turns, len(s.Payloads))
		}
		for _, p := range s.Payloads {
			if sh := shapeOf(p); !slices.Contains(in.shapes, sh) {
				in.shapes = append(in.shapes, sh)
			}
			in.images = append(in.images, imagesOf(t, p)...)
			if m, ok := p.(map[string]any); ok {
				for _, key := range []string{"passages", "documents", "texts"} {
					if list, ok := m[key].([]any); ok && !slices.Contains(in.passages, len(list)) {
						in.passages = append(in.passages, len(list))
					}
				}
			}
		}
	}
	slices.Sort(in.turns)
	slices.Sort(in.shapes)
	slices.Sort(in.passages)
	return in, true
}

// imagesOf describes the data-URL images in a JSON value, in order.
func imagesOf(t *testing.T, v any) []string {
	switch v := v.(type) {
	case map[string]any:
		if url, ok := v["url"].(string); ok && strings.HasPrefix(url, "data:image/") {
			_, data, _ := strings.Cut(url, ",")
			raw, err := base64.StdEncoding.DecodeString(data)
			if err != nil {
				t.Fatal(err)
			}
			img, _, err := image.Decode(bytes.NewReader(raw))
			if err != nil {
				t.Fatalf("an image of %.40q: %v", url, err)
			}
			b := img.Bounds()
			r, g, bl, _ := img.At(b.Min.X+b.Dx()/2, b.Min.Y+b.Dy()/2).RGBA()
			near := func(c uint32) uint32 { return (c>>8 + 32) / 64 * 64 }
			return []string{fmt.Sprintf("%dx%d %d,%d,%d", b.Dx(), b.Dy(), near(r), near(g), near(bl))}
		}
		var out []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			out = append(out, imagesOf(t, v[k])...)
		}
		return out
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, imagesOf(t, e)...)
		}
		return out
	}
	return nil
}

// exportedRequests counts the records of dir's profile_export.jsonl.
func exportedRequests(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "profile_export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}

// exportedImages is the num_images of each record of dir's profile_export.jsonl (0 where it
// has none), sorted.
func exportedImages(t *testing.T, dir string) []float64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "profile_export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	for line := range bytes.Lines(b) {
		var rec struct {
			Metrics struct {
				NumImages struct {
					Value float64 `json:"value"`
				} `json:"num_images"`
			} `json:"metrics"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("%s/profile_export.jsonl: %v", dir, err)
		}
		out = append(out, rec.Metrics.NumImages.Value)
	}
	slices.Sort(out)
	return out
}

// shapeOf writes a JSON value's shape: objects with their sorted keys, arrays as the distinct
// shapes of their elements, and the type of anything else.
func shapeOf(v any) string {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var b strings.Builder
		b.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k + ": " + shapeOf(v[k]))
		}
		return b.String() + "}"
	case []any:
		var elems []string
		for _, e := range v {
			if s := shapeOf(e); !slices.Contains(elems, s) {
				elems = append(elems, s)
			}
		}
		slices.Sort(elems)
		return "[" + strings.Join(elems, " | ") + "]"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}
