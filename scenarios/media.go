package scenarios

import (
	"math"
	"slices"
)

// The synthetic images and audio clips a chat request can carry, as AIPerf
// 0.13 synthesises them (its --image-* and --audio-* options): random
// noise, sent as content parts next to the prompt's text.

// Image formats; ImageRandom picks PNG or JPEG for each image.
const (
	ImagePNG    = "png"
	ImageJPEG   = "jpeg"
	ImageRandom = "random"
)

// AudioWAV is the one audio format: uncompressed PCM in a RIFF WAVE file.
const AudioWAV = "wav"

// Images attaches noise images to every request.
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
	// Format is wav, the only one. Default wav.
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
	if a.Format != AudioWAV {
		l.errorf(join(path, "format"), "must be %s, not %q: inferprobe writes uncompressed WAV only", AudioWAV, a.Format)
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
