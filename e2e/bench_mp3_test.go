package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mp3Command is an AIPerf 0.13 command line with --audio-format mp3 clips
// of three rates, one per MPEG version, in stereo.
const mp3Command = `-m ` + blogModel + ` --url {url} --endpoint-type chat --streaming --request-count 6 --isl 16 --osl 8 ` +
	`--audio-length-mean 0.5 --audio-length-stddev 0.1 --audio-format mp3 --audio-sample-rates 8 --audio-sample-rates 22.05 ` +
	`--audio-sample-rates 44.1 --audio-num-channels 2 --ui-type none --output-artifact-dir {out}`

// TestBenchMP3ClipsDecode runs one --audio-format mp3 command line as real
// AIPerf 0.13 and as bench against the simulator, and decodes every clip
// each sent with soundfile (libsndfile's mpg123), the library AIPerf writes
// its clips with: both are MP3 of a rate asked for, in stereo, that decode
// to the samples of the request's audio_duration (AIPerf's int(seconds ×
// rate)); bench's are silence, AIPerf's noise (what differs, as the docs
// say), and bench's are of a size near AIPerf's. The simulator reads each
// clip's duration from its frames and charges it prefill time.
func TestBenchMP3ClipsDecode(t *testing.T) {
	venv := requireAIPerf(t)
	url := freeAddr(t)
	sim := inferprobe(t, "inferprobe simulate", t.TempDir(), "simulate", "--web.listen-address="+url, "--sim.model="+blogModel,
		"--sim.ttft=20ms", "--sim.itl=1ms", "--sim.prefill-per-audio-second=200ms")
	waitHealthy(t, sim, "http://"+url+"/health", 10*time.Second)
	work := t.TempDir()
	tok := qwenTokenizerDir(t)
	command := func(out string) []string {
		return append(shellWords(t, strings.NewReplacer("{url}", url, "{out}", filepath.Join(work, out)).Replace(mp3Command)), "--tokenizer", tok)
	}
	runAIPerf(t, 3*time.Minute, []string{"HOME=" + work}, filepath.Join(venv, "bin", "aiperf"), append([]string{"profile"}, command("aiperf")...)...)
	if code, out := benchIn(t, work, command("bench")...); code != 0 {
		t.Fatalf("bench exited %d:\n%s", code, out)
	}

	bytesSent := map[string]int{}
	for _, who := range []string{"aiperf", "bench"} {
		sent := sentMedia(t, filepath.Join(work, who))
		if len(sent) != 6 {
			t.Fatalf("%s: %d requests with media, want 6", who, len(sent))
		}
		var files []string
		for i, r := range sent {
			if len(r.mp3s) != 1 || len(r.formats) != 1 {
				t.Fatalf("%s request %d: audio formats %v, want one mp3 clip", who, i, r.formats)
			}
			b, err := base64.StdEncoding.DecodeString(r.mp3s[0])
			if err != nil {
				t.Fatal(err)
			}
			bytesSent[who] += len(b)
			files = append(files, filepath.Join(work, fmt.Sprintf("%s-%d.mp3", who, i)))
			if err := os.WriteFile(files[i], b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out := runAIPerf(t, time.Minute, nil, filepath.Join(venv, "bin", "python"),
			append([]string{filepath.Join(repoRoot(t), "e2e", "testdata", "aiperf", "decode_audio.py")}, files...)...)
		var decoded []struct {
			Format                             string
			Samplerate, Channels, Frames, Peak int
		}
		if err := json.Unmarshal(out, &decoded); err != nil || len(decoded) != len(sent) {
			t.Fatalf("decode_audio.py printed %q: %v", out, err)
		}
		for i, d := range decoded {
			r := sent[i]
			if want := int(r.audioDuration * float64(d.Samplerate)); d.Format != "MP3" || d.Channels != 2 || (d.Samplerate != 8000 && d.Samplerate != 22050 && d.Samplerate != 44100) ||
				d.Frames < want-1 || d.Frames > want+1 {
				t.Errorf("%s request %d: decodes as %+v; want stereo MP3 of 8, 22.05 or 44.1 kHz, %d samples (%v s)", who, i, d, want, r.audioDuration)
			}
			if (who == "bench") != (d.Peak == 0) {
				t.Errorf("%s request %d: peak sample %d; bench's clips are silence, AIPerf's noise", who, i, d.Peak)
			}
			if r.ttft < 20+200*r.audioDuration {
				t.Errorf("%s request %d: time to first token %v ms, want at least 20 + %v s x 200 ms: the simulator charges the clip's duration", who, i, r.ttft, r.audioDuration)
			}
		}
	}
	t.Logf("clips sent: bench %d bytes, AIPerf %d", bytesSent["bench"], bytesSent["aiperf"])
	if ratio := float64(bytesSent["bench"]) / float64(bytesSent["aiperf"]); ratio < 0.7 || ratio > 1.3 {
		t.Errorf("bench's clips are %d bytes, AIPerf's %d (%.2f×): want within 30 %%", bytesSent["bench"], bytesSent["aiperf"], ratio)
	}
}
