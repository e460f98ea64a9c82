package e2e

import (
	"bytes"
	"encoding/base64"
	byteorder "encoding/binary" // binary is the e2e binary
	"encoding/json"
	"image"
	_ "image/jpeg" // image.DecodeConfig of the JPEG data URLs
	_ "image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// mediaCommand is an AIPerf 0.13 command line with images and audio; {url}
// is the simulator, {out} the artifact directory.
const mediaCommand = `-m ` + blogModel + ` --url {url} --endpoint-type chat --streaming --request-count 3 --isl 16 --osl 8 ` +
	`--image-batch-size 2 --image-width-mean 64 --image-width-stddev 8 --image-height-mean 48 --image-format random ` +
	`--audio-length-mean 0.2 --audio-sample-rates 16 --audio-sample-rates 44.1 --audio-depths 16 --audio-depths 24 ` +
	`--tokenizer ` + blogModel + ` --ui-type none --output-artifact-dir {out}`

// TestBenchMediaInputsMatchAIPerf runs one command line with images and
// audio as real AIPerf 0.13's `aiperf profile` and as `inferprobe bench`
// against the simulator, and compares what each sent (inputs.json) and
// recorded (profile_export.jsonl): the same content parts in the same order,
// data URLs of the same kind whose images decode to the sizes asked for,
// WAV clips of the rates, depths and length asked for, and each request's
// num_images and audio_duration, and the simulator charges both runs'
// media the same prefill time; AIPerf's models load bench's records.
func TestBenchMediaInputsMatchAIPerf(t *testing.T) {
	venv := requireAIPerf(t)
	// The simulator charges each image 25 ms and each second of audio
	// 100 ms of prefill: with 2 images and 0.2 s of audio the first token
	// comes 70 ms after the base 20 ms, whoever sent the request.
	url := freeAddr(t)
	sim := inferprobe(t, "inferprobe simulate", t.TempDir(), "simulate", "--web.listen-address="+url, "--sim.model="+blogModel,
		"--sim.ttft=20ms", "--sim.itl=1ms", "--sim.prefill-per-image=25ms", "--sim.prefill-per-audio-second=100ms")
	waitHealthy(t, sim, "http://"+url+"/health", 10*time.Second)
	work := t.TempDir()
	// AIPerf counts synthetic prompts with a tokenizer: the model's, from a
	// Hugging Face cache of the test's own, offline; bench reads the same.
	snapshot := filepath.Join(work, "hf", "models--Qwen--Qwen3-0.6B", "snapshots", hubCommit)
	tok, err := os.ReadFile(filepath.Join(repoRoot(t), "tokenizer", "testdata", "qwen2_tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		filepath.Join(snapshot, "tokenizer.json"):                             tok,
		filepath.Join(snapshot, "tokenizer_config.json"):                      []byte(`{"tokenizer_class": "PreTrainedTokenizerFast"}`),
		filepath.Join(work, "hf", "models--Qwen--Qwen3-0.6B", "refs", "main"): []byte(hubCommit),
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HF_HUB_CACHE", filepath.Join(work, "hf"))
	t.Setenv("HF_HUB_OFFLINE", "1")
	command := func(out string) []string {
		return shellWords(t, strings.NewReplacer("{url}", url, "{out}", filepath.Join(work, out)).Replace(mediaCommand))
	}

	runAIPerf(t, 3*time.Minute, []string{"HOME=" + work}, filepath.Join(venv, "bin", "aiperf"), append([]string{"profile"}, command("aiperf")...)...)
	if code, out := benchIn(t, work, command("bench")...); code != 0 {
		t.Fatalf("bench exited %d:\n%s", code, out)
	}

	// AIPerf's own models load bench's per-request records, the image and
	// audio metrics included.
	checked := runAIPerf(t, 2*time.Minute, nil, filepath.Join(venv, "bin", "python"),
		filepath.Join(repoRoot(t), "e2e", "testdata", "aiperf", "check_artifacts.py"), filepath.Join(work, "bench"))
	var loaded struct {
		LoadedRequests int      `json:"loaded_requests"`
		Metrics        []string `json:"metrics_per_record"`
	}
	if err := json.Unmarshal(checked, &loaded); err != nil {
		t.Fatalf("check_artifacts.py printed %q: %v", checked, err)
	}
	for _, m := range []string{"num_images", "image_throughput", "image_latency", "audio_duration", "rtfx"} {
		if loaded.LoadedRequests != 3 || !slices.Contains(loaded.Metrics, m) {
			t.Errorf("AIPerf loaded %d of bench's records, with metrics %v; want 3, with %s", loaded.LoadedRequests, loaded.Metrics, m)
		}
	}

	want := sentMedia(t, filepath.Join(work, "aiperf"))
	got := sentMedia(t, filepath.Join(work, "bench"))
	if len(got) != 3 || len(want) != 3 {
		t.Fatalf("requests with media: AIPerf %d, bench %d; want 3 each", len(want), len(got))
	}
	for i := range got {
		if !slices.Equal(got[i].keys, want[i].keys) || !slices.Equal(got[i].parts, want[i].parts) {
			t.Errorf("request %d: bench sent keys %v, parts %v; AIPerf %v, %v", i, got[i].keys, got[i].parts, want[i].keys, want[i].parts)
		}
		for who, r := range map[string]mediaRequest{"AIPerf": want[i], "bench": got[i]} {
			for _, im := range r.images {
				// 64 ± 5 stddevs of 8 wide, 48 high.
				if (im.format != "png" && im.format != "jpeg") || im.width < 24 || im.width > 104 || im.height != 48 {
					t.Errorf("%s request %d: image %+v, want a png or jpeg about 64 wide and 48 high", who, i, im)
				}
			}
			if !slices.Equal(r.formats, []string{"wav"}) {
				t.Errorf("%s request %d: audio formats %v, want one wav clip", who, i, r.formats)
			}
			for _, c := range r.clips {
				if (c.rate != 16000 && c.rate != 44100) || (c.depth != 16 && c.depth != 24) || c.channels != 1 || c.seconds < 0.19 || c.seconds > 0.21 {
					t.Errorf("%s request %d: clip %+v, want mono WAV of 16 or 44.1 kHz, 16 or 24 bits, 0.2 s", who, i, c)
				}
			}
			if r.numImages != 2 || r.audioDuration < 0.19 || r.audioDuration > 0.21 {
				t.Errorf("%s request %d: profile_export.jsonl has num_images %v and audio_duration %v, want 2 and 0.2", who, i, r.numImages, r.audioDuration)
			}
			if r.ttft < 90 {
				t.Errorf("%s request %d: time to first token %v ms, want at least 20 + 2 x 25 + 0.2 x 100", who, i, r.ttft)
			}
		}
	}
}

type mediaRequest struct {
	keys, parts []string
	images      []sentImage
	// formats are the input_audio parts' formats; clips the WAV ones
	// decoded, mp3s the MP3 ones as sent (base64).
	formats []string
	clips   []sentClip
	mp3s    []string
	// From profile_export.jsonl, in the same order.
	numImages, audioDuration, ttft float64
}

type sentImage struct {
	format        string
	width, height int
}

type sentClip struct {
	rate, depth, channels int
	seconds               float64
}

// sentMedia reads what the run in dir sent: each request of inputs.json
// (one per session here), and its line of profile_export.jsonl.
func sentMedia(t *testing.T, dir string) []mediaRequest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "inputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var inputs struct {
		Data []struct {
			Payloads []map[string]json.RawMessage `json:"payloads"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &inputs); err != nil {
		t.Fatal(err)
	}
	var out []mediaRequest
	for _, s := range inputs.Data {
		for _, p := range s.Payloads {
			var r mediaRequest
			for k := range p {
				r.keys = append(r.keys, k)
			}
			slices.Sort(r.keys)
			var msgs []struct {
				Content json.RawMessage `json:"content"`
			}
			if err := json.Unmarshal(p["messages"], &msgs); err != nil || len(msgs) == 0 {
				t.Fatalf("%s: messages %s: %v", dir, p["messages"], err)
			}
			var parts []struct {
				Type     string `json:"type"`
				ImageURL struct {
					URL string `json:"url"`
				} `json:"image_url"`
				InputAudio struct {
					Data, Format string
				} `json:"input_audio"`
			}
			if err := json.Unmarshal(msgs[len(msgs)-1].Content, &parts); err != nil {
				t.Fatalf("%s: the last message's content is not a list of parts: %v", dir, err)
			}
			for _, part := range parts {
				r.parts = append(r.parts, part.Type)
				switch part.Type {
				case "image_url":
					r.images = append(r.images, decodeImage(t, part.ImageURL.URL))
				case "input_audio":
					r.formats = append(r.formats, part.InputAudio.Format)
					switch part.InputAudio.Format {
					case "wav":
						r.clips = append(r.clips, decodeWAV(t, part.InputAudio.Data))
					case "mp3":
						r.mp3s = append(r.mp3s, part.InputAudio.Data)
					}
				}
			}
			out = append(out, r)
		}
	}
	b, err = os.ReadFile(filepath.Join(dir, "profile_export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	for i := range min(len(lines), len(out)) {
		var line struct {
			Metrics struct {
				NumImages     struct{ Value float64 } `json:"num_images"`
				AudioDuration struct{ Value float64 } `json:"audio_duration"`
				TTFT          struct{ Value float64 } `json:"time_to_first_token"`
			} `json:"metrics"`
		}
		if err := json.Unmarshal(lines[i], &line); err != nil {
			t.Fatal(err)
		}
		out[i].numImages, out[i].audioDuration, out[i].ttft = line.Metrics.NumImages.Value, line.Metrics.AudioDuration.Value, line.Metrics.TTFT.Value
	}
	return out
}

func decodeImage(t *testing.T, url string) sentImage {
	t.Helper()
	head, data, ok := strings.Cut(url, ",")
	format, isImage := strings.CutPrefix(head, "data:image/")
	format, isBase64 := strings.CutSuffix(format, ";base64")
	if !ok || !isImage || !isBase64 {
		t.Fatalf("image URL %.40q… is not data:image/FORMAT;base64,…", url)
	}
	cfg, kind, err := image.DecodeConfig(base64.NewDecoder(base64.StdEncoding, strings.NewReader(data)))
	if err != nil || kind != format {
		t.Fatalf("image %.40q… decodes as %q (%v), not %s", url, kind, err, format)
	}
	return sentImage{format: format, width: cfg.Width, height: cfg.Height}
}

// decodeWAV reads a base64 WAV file's fmt chunk and its length.
func decodeWAV(t *testing.T, data string) sentClip {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil || len(b) < 44 || string(b[0:4]) != "RIFF" || string(b[8:16]) != "WAVEfmt " {
		t.Fatalf("audio is not a WAV file (%v): %.16q", err, b)
	}
	le := byteorder.LittleEndian
	c := sentClip{channels: int(le.Uint16(b[22:])), rate: int(le.Uint32(b[24:])), depth: int(le.Uint16(b[34:]))}
	// The data chunk follows the fmt chunk, past any others.
	for off := 20 + int(le.Uint32(b[16:])); off+8 <= len(b); off += 8 + int(le.Uint32(b[off+4:])) {
		if string(b[off:off+4]) == "data" {
			c.seconds = float64(le.Uint32(b[off+4:])) / float64(int(le.Uint32(b[28:])))
			break
		}
	}
	return c
}
