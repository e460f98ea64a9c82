package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMediaFlags: AIPerf's image and audio options become the synthetic
// dataset's images and audio, which check and load; options that send
// nothing, as in AIPerf, are noted.
func TestMediaFlags(t *testing.T) {
	photos := t.TempDir()
	if err := os.WriteFile(filepath.Join(photos, "a.png"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		want  []string // substrings of the generated YAML
		notes int
	}{
		{"images", []string{"--image-width-mean", "512", "--image-width-stddev", "10", "--image-height-mean", "256", "--batch-size-image", "3", "--image-format", "random"},
			[]string{"batch_size: 3", "mean: 512", "stddev: 10", "mean: 256", "format: random"}, 0},
		{"audio, a rate in Hz as AIPerf reads it", []string{"--audio-length-mean", "2.5", "--audio-sample-rates", "16", "--audio-sample-rates", "44100",
			"--audio-depths", "24", "--audio-num-channels", "2", "--batch-size-audio", "2"},
			[]string{"mean: 2.5", "- 16", "- 44.1", "- 24", "channels: 2", "batch_size: 2", "format: wav"}, 0},
		{"a directory of images, cycled in name order", []string{"--image-width-mean", "32", "--image-height-mean", "24", "--image-source", photos, "--image-source-sampling", "sequential-cycle"},
			[]string{"source: " + photos, "sampling: sequential-cycle"}, 0},
		{"mp3", []string{"--audio-length-mean", "1", "--audio-format", "mp3", "--audio-sample-rates", "22.05"}, []string{"format: mp3", "- 22.05"}, 0},
		{"a width alone sends no images", []string{"--image-width-mean", "512"}, nil, 1},
		{"a batch of 0 sends no audio", []string{"--audio-length-mean", "1", "--audio-batch-size", "0"}, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, yml := scenarioYAML(t, append([]string{"--model", "m"}, tc.args...), tc.want)
			if len(sc.notes) != tc.notes {
				t.Errorf("notes %q, want %d", sc.notes, tc.notes)
			}
			checkWritten(t, sc, yml)
		})
	}
}

// TestMediaFlagsRefused: what bench cannot send is refused with a reason.
func TestMediaFlagsRefused(t *testing.T) {
	images := []string{"--model", "m", "--image-width-mean", "64", "--image-height-mean", "64"}
	wantScenarioError(t, append(images, "--endpoint-type", "completions"), "only --endpoint-type chat carries, not completions")
	wantScenarioError(t, append(images, "--input-file", "bench_test.go"), "an --input-file's entries are sent as written")
	// The scenario's checks, as bench prints them: by flag.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "m", "--audio-length-mean", "1", "--audio-depths", "12"}, "inferprobe bench: --audio-depths: lists 12: each must be 8, 16, 24 or 32 bits"},
		{[]string{"--model", "m", "--audio-length-mean", "1", "--audio-format", "mp3", "--audio-sample-rates", "44"}, "inferprobe bench: --audio-sample-rates: lists 44: mp3 has 8, 11.025"},
		{append(images, "--image-batch-size", "65"), "inferprobe bench: --image-batch-size: must be 1 to 64 per request, not 65"},
		{append(images, "--image-source", "./photos"), "inferprobe bench: --image-source: cannot read directory photos: no such file or directory; give a directory of image files"},
		{append(images, "--image-source-sampling", "shuffle-cycle"), "inferprobe bench: --image-source-sampling: shuffle-cycle picks the files of a source directory; noise images have none"},
	} {
		var stderr strings.Builder
		if _, err := parseBench(t, tc.args...).planRun(&stderr, false); err == nil || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: error %v, printed %q; want %q", tc.args, err, stderr.String(), tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--image-source", "assets"}, "--image-source assets is an AIPerf image source that inferprobe does not support: bench does not ship AIPerf's bundled images; give --image-source a directory of images instead"},
		{[]string{"--image-source-sampling", "cycle"}, `--image-source-sampling "cycle": want one of random-with-replacement, sequential-cycle, shuffle-cycle`},
	} {
		app, _ := benchApp()
		if _, err := app.Parse(append([]string{"bench", "--model", "m"}, tc.args...)); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}
