package scenarios

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestMediaFields(t *testing.T) {
	data := edit(t, "    arrival: {rate: 0.2}\n", `    arrival: {rate: 0.2}
    dataset:
      synthetic:
        images: {width: {mean: 512}, height: {mean: 256, stddev: 10}}
        audio: {length: {mean: 5}}
`)
	c, err := Parse([]byte(data), "s.yml")
	if err != nil {
		t.Fatal(err)
	}
	s := c.Probes["steady"].Dataset.Synthetic
	wantImages := Images{BatchSize: 1, Width: Lengths{Mean: 512}, Height: Lengths{Mean: 256, Stddev: 10}, Format: ImagePNG, Sampling: SamplingRandom}
	wantAudio := Audio{BatchSize: 1, Length: Seconds{Mean: 5}, SampleRates: []float64{16}, Depths: []int{16}, Channels: 1, Format: AudioWAV}
	if s.Images == nil || *s.Images != wantImages || s.Audio == nil || !reflect.DeepEqual(*s.Audio, wantAudio) {
		t.Fatalf("images %+v, audio %+v; want the defaults filled in: %+v, %+v", s.Images, s.Audio, wantImages, wantAudio)
	}
}

// TestImageSource: a source directory is resolved against the scenario
// file's directory and its sampling kept.
func TestImageSource(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "photos"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "photos", "a.JPG"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	data := edit(t, "    arrival: {rate: 0.2}\n", `    arrival: {rate: 0.2}
    dataset:
      synthetic:
        images: {width: {mean: 64}, height: {mean: 64}, source: photos, sampling: shuffle-cycle}
`)
	c, err := Parse([]byte(data), filepath.Join(dir, "s.yml"))
	if err != nil {
		t.Fatal(err)
	}
	im := c.Probes["steady"].Dataset.Synthetic.Images
	if want := filepath.Join(dir, "photos"); im.Source != want || im.Sampling != SamplingShuffle {
		t.Errorf("source %q, sampling %q; want %q, %s", im.Source, im.Sampling, want, SamplingShuffle)
	}
}

func TestMediaErrors(t *testing.T) {
	for _, tc := range []struct{ name, target, synthetic, want string }{
		{"sides", "", "images: {width: {mean: 0}, height: {mean: 9000}, format: gif}",
			"images.format: must be png, jpeg or random, not \"gif\"|images.height.mean: must be 1 to 8192 pixels, not 9000|images.width.mean: must be 1 to 8192 pixels, not 0"},
		{"audio", "", "audio: {length: {mean: 0.001}, depths: [12], sample_rates: [200], channels: 3, format: ogg, batch_size: 0}",
			"audio.batch_size: must be 1 to 64 per request, not 0|audio.channels: must be 1 (mono) or 2 (stereo), not 3|audio.depths: lists 12|audio.format: must be wav or mp3, not \"ogg\"|audio.length.mean: must be 0.01 to 600 seconds|audio.sample_rates: lists 200: each must be 0.1 to 96 kHz"},
		{"mp3 rates", "", "audio: {length: {mean: 1}, sample_rates: [16, 44.1, 11, 96], format: mp3}",
			"audio.sample_rates: lists 11: mp3 has 8, 11.025, 12, 16, 22.05, 24, 32, 44.1, 48 kHz only (AIPerf refuses others too)|audio.sample_rates: lists 96: mp3 has"},
		{"sampling", "", "images: {width: {mean: 8}, height: {mean: 8}, sampling: shuffle}",
			`images.sampling: must be random-with-replacement, shuffle-cycle or sequential-cycle, not "shuffle"`},
		{"sampling noise", "", "images: {width: {mean: 8}, height: {mean: 8}, sampling: sequential-cycle}",
			"images.sampling: sequential-cycle picks the files of a source directory; noise images have none"},
		{"no source directory", "", "images: {width: {mean: 8}, height: {mean: 8}, source: no-such-dir}",
			"images.source: cannot read directory no-such-dir: no such file or directory; give a directory of image files"},
		{"source not a directory", "", "images: {width: {mean: 8}, height: {mean: 8}, source: media_test.go}",
			"images.source: media_test.go is not a directory"},
		{"source without images", "", "images: {width: {mean: 8}, height: {mean: 8}, source: testdata}",
			"images.source: testdata holds no image file (.bmp .dib"},
		{"not chat", "    endpoint: completions\n", "audio: {length: {mean: 1}}",
			"probes.steady.dataset.synthetic: sends images or audio, which only endpoint chat carries; target qwen is completions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := edit(t, "    arrival: {rate: 0.2}\n", "    arrival: {rate: 0.2}\n    dataset:\n      synthetic:\n        "+tc.synthetic+"\n")
			data = strings.Replace(data, "    model: Qwen/Qwen3-0.6B\n", "    model: Qwen/Qwen3-0.6B\n"+tc.target, 1)
			got := parseError(t, data)
			for _, want := range strings.Split(tc.want, "|") {
				if !strings.Contains(got, want) {
					t.Errorf("error lacks %q:\n%s", want, got)
				}
			}
		})
	}
}
