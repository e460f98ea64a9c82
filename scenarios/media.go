package scenarios

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/inferprobe/inferprobe/mp3"
)

// The synthetic images and audio clips a chat request can carry, as AIPerf
// 0.13 synthesises them (its --image-* and --audio-* options): random
// noise, or images from a directory resized to the drawn size, sent as
// content parts next to the prompt's text.

// Image formats; ImageRandom picks PNG or JPEG for each image.
const (
	ImagePNG    = "png"
	ImageJPEG   = "jpeg"
	ImageRandom = "random"
)

// How images are taken from a source directory, AIPerf's
// --image-source-sampling: each drawn at random; each once per shuffled
// pass; or in name order, wrapping.
const (
	SamplingRandom     = "random-with-replacement"
	SamplingShuffle    = "shuffle-cycle"
	SamplingSequential = "sequential-cycle"
)

// ImageExtensions are the files of a source directory read as images, the
// formats inferprobe decodes (the common ones of Pillow, which AIPerf reads
// them with); other files are left out, as AIPerf leaves out what Pillow
// does not know.
var ImageExtensions = []string{".bmp", ".dib", ".gif", ".jfif", ".jpe", ".jpeg", ".jpg", ".png", ".tif", ".tiff", ".webp"}

// Audio formats: uncompressed PCM in a RIFF WAVE file, or MPEG audio
// Layer III, written as silence (package mp3 says why).
const (
	AudioWAV = "wav"
	AudioMP3 = "mp3"
)

// Images attaches noise images, or images of a directory, to every request.
type Images struct {
	// BatchSize is the images per request; >= 1. Default 1.
	BatchSize int `yaml:"batch_size"`
	// Width and Height are in pixels, each drawn per image as AIPerf draws
	// them: normal(mean, stddev) truncated at 0, rounded up, at least 1.
	// Means >= 1 and at most MaxImageSide; required.
	Width  Lengths `yaml:"width"`
	Height Lengths `yaml:"height"`
	// Format is png, jpeg or random (each image PNG or JPEG at random).
	// Default png.
	Format string `yaml:"format"`
	// Source is a directory of images (ImageExtensions), AIPerf's
	// --image-source DIR: each image is one of them, resized to the drawn
	// width and height; a file that cannot be decoded is skipped. A
	// relative path is relative to the scenario file's directory, and Load
	// rewrites it to the resolved path. Default none: noise images.
	Source string `yaml:"source"`
	// Sampling is how each image's file is picked from Source:
	// random-with-replacement, shuffle-cycle or sequential-cycle. Default
	// random-with-replacement, the only one without Source.
	Sampling string `yaml:"sampling"`
}

// Audio attaches noise audio clips to every request.
type Audio struct {
	// BatchSize is the clips per request; >= 1. Default 1.
	BatchSize int `yaml:"batch_size"`
	// Length is each clip's duration in seconds, drawn normally and redrawn
	// below 0.01 s, as AIPerf draws it. Mean >= 0.01 and at most
	// MaxAudioSeconds; required.
	Length Seconds `yaml:"length"`
	// SampleRates are in kHz; each clip takes one at random. Default [16].
	SampleRates []float64 `yaml:"sample_rates"`
	// Depths are bits per sample, each 8, 16, 24 or 32; each clip takes one
	// at random. Default [16].
	Depths []int `yaml:"depths"`
	// Channels is 1 (mono) or 2 (stereo). Default 1.
	Channels int `yaml:"channels"`
	// Format is wav (noise, PCM of the drawn depth) or mp3 (digital
	// silence: inferprobe encodes no sound; the depth is drawn but unused,
	// as in AIPerf; each sample rate must be one MPEG audio has, 8 to 48
	// kHz). Default wav.
	Format string `yaml:"format"`
}

// Seconds is a normal distribution of durations in seconds.
type Seconds struct {
	Mean   float64 `yaml:"mean"`
	Stddev float64 `yaml:"stddev"`
}

// Limits of a synthetic image or clip, which keep one request's body in
// memory-sized bounds.
const (
	MaxImageSide    = 8192
	MaxAudioSeconds = 600
	MaxMediaBatch   = 64
	minAudioSeconds = 0.01 // AIPerf's
)

// HasMedia reports whether the synthetic requests carry images or audio.
func (s *Synthetic) HasMedia() bool { return s.Images != nil || s.Audio != nil }

func (i *Images) setDefaults(written func(string) bool, path string) {
	if !written(join(path, "batch_size")) {
		i.BatchSize = 1
	}
	if !written(join(path, "format")) {
		i.Format = ImagePNG
	}
	if !written(join(path, "sampling")) {
		i.Sampling = SamplingRandom
	}
}

// SourceImages lists the image files of dir (ImageExtensions, any case),
// sorted by name as AIPerf's sorted glob, hidden files left out as the
// glob leaves them. An error says what is wrong with dir and what to do.
func SourceImages(dir string) ([]string, error) {
	const hint = "give a directory of image files (PNG, JPEG, GIF, BMP, TIFF or WebP)"
	entries, err := os.ReadDir(dir)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		if st, serr := os.Stat(dir); serr == nil && !st.IsDir() {
			return nil, fmt.Errorf("%s is not a directory; %s", dir, hint)
		}
		return nil, fmt.Errorf("cannot read directory %s: %v; %s", dir, err, hint)
	}
	var files []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !slices.Contains(ImageExtensions, strings.ToLower(filepath.Ext(name))) {
			continue
		}
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.IsDir() {
			continue
		}
		files = append(files, filepath.Join(dir, name))
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s holds no image file (%s); put images there or %s", dir, strings.Join(ImageExtensions, " "), hint)
	}
	return files, nil
}

func (a *Audio) setDefaults(written func(string) bool, path string) {
	if !written(join(path, "batch_size")) {
		a.BatchSize = 1
	}
	if !written(join(path, "sample_rates")) {
		a.SampleRates = []float64{16}
	}
	if !written(join(path, "depths")) {
		a.Depths = []int{16}
	}
	if !written(join(path, "channels")) {
		a.Channels = 1
	}
	if !written(join(path, "format")) {
		a.Format = AudioWAV
	}
}

func validateBatch(l *loader, path string, n int) {
	if n < 1 || n > MaxMediaBatch {
		l.errorf(join(path, "batch_size"), "must be 1 to %d per request, not %d", MaxMediaBatch, n)
	}
}

func (i *Images) validate(l *loader, path string) {
	validateBatch(l, path, i.BatchSize)
	for _, side := range []struct {
		name string
		v    Lengths
	}{{"width", i.Width}, {"height", i.Height}} {
		if !(side.v.Mean >= 1 && side.v.Mean <= MaxImageSide) {
			l.errorf(join(path, side.name+".mean"), "must be 1 to %d pixels, not %v, e.g. %s: {mean: 512}", MaxImageSide, side.v.Mean, side.name)
		}
		if !(side.v.Stddev >= 0) || math.IsInf(side.v.Stddev, 1) {
			l.errorf(join(path, side.name+".stddev"), "must be >= 0 pixels, not %v", side.v.Stddev)
		}
	}
	if !slices.Contains([]string{ImagePNG, ImageJPEG, ImageRandom}, i.Format) {
		l.errorf(join(path, "format"), "must be %s, %s or %s, not %q", ImagePNG, ImageJPEG, ImageRandom, i.Format)
	}
	switch {
	case !slices.Contains([]string{SamplingRandom, SamplingShuffle, SamplingSequential}, i.Sampling):
		l.errorf(join(path, "sampling"), "must be %s, %s or %s, not %q", SamplingRandom, SamplingShuffle, SamplingSequential, i.Sampling)
	case i.Source == "" && i.Sampling != SamplingRandom:
		l.errorf(join(path, "sampling"), "%s picks the files of a source directory; noise images have none to cycle through (AIPerf refuses it too): set source or drop sampling", i.Sampling)
	}
	if i.Source != "" {
		i.Source = l.resolve(i.Source)
		if _, err := SourceImages(i.Source); err != nil {
			l.errorf(join(path, "source"), "%v", err)
		}
	}
}

func (a *Audio) validate(l *loader, path string) {
	validateBatch(l, path, a.BatchSize)
	if !(a.Length.Mean >= minAudioSeconds && a.Length.Mean <= MaxAudioSeconds) {
		l.errorf(join(path, "length.mean"), "must be %v to %d seconds, not %v, e.g. length: {mean: 5}", minAudioSeconds, MaxAudioSeconds, a.Length.Mean)
	}
	if !(a.Length.Stddev >= 0) || math.IsInf(a.Length.Stddev, 1) {
		l.errorf(join(path, "length.stddev"), "must be >= 0 seconds, not %v", a.Length.Stddev)
	}
	if len(a.SampleRates) == 0 {
		l.errorf(join(path, "sample_rates"), "lists no rate; e.g. sample_rates: [16, 44.1] (kHz)")
	}
	for _, r := range a.SampleRates {
		if !(r >= 0.1 && r <= 96) {
			l.errorf(join(path, "sample_rates"), "lists %v: each must be 0.1 to 96 kHz", r)
		}
	}
	if len(a.Depths) == 0 {
		l.errorf(join(path, "depths"), "lists no depth; e.g. depths: [16]")
	}
	for _, d := range a.Depths {
		if !slices.Contains([]int{8, 16, 24, 32}, d) {
			l.errorf(join(path, "depths"), "lists %d: each must be 8, 16, 24 or 32 bits", d)
		}
	}
	if a.Channels != 1 && a.Channels != 2 {
		l.errorf(join(path, "channels"), "must be 1 (mono) or 2 (stereo), not %d", a.Channels)
	}
	switch a.Format {
	case AudioWAV:
	case AudioMP3:
		for _, r := range a.SampleRates {
			if !slices.Contains(mp3.SampleRates, int(r*1000)) { // AIPerf's truncation to Hz
				khz := make([]string, len(mp3.SampleRates))
				for i, hz := range mp3.SampleRates {
					khz[i] = strconv.FormatFloat(float64(hz)/1000, 'f', -1, 64)
				}
				l.errorf(join(path, "sample_rates"), "lists %v: mp3 has %s kHz only (AIPerf refuses others too)", r, strings.Join(khz, ", "))
			}
		}
	default:
		l.errorf(join(path, "format"), "must be %s or %s, not %q", AudioWAV, AudioMP3, a.Format)
	}
}

// validateMedia checks the images and audio of s.
func (s *Synthetic) validateMedia(l *loader, path string) {
	if i := s.Images; i != nil {
		i.validate(l, join(path, "images"))
	}
	if a := s.Audio; a != nil {
		a.validate(l, join(path, "audio"))
	}
}
