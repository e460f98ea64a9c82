package main

import (
	"fmt"
	"strconv"

	"github.com/alecthomas/kingpin/v2"

	"github.com/inferprobe/inferprobe/scenarios"
)

// mediaFlags are AIPerf's Image Input and Audio Input options; they fill
// the synthetic dataset's images and audio (scenarios/media.go).
type mediaFlags struct {
	widthMean, widthStddev   float64
	heightMean, heightStddev float64
	imageBatch               int
	imageFormat, imageSource string
	imageSampling            string
	audioBatch               int
	lengthMean, lengthStddev float64
	audioFormat              string
	depths, rates            []string
	channels                 int
	set                      map[string]*bool
}

// AIPerf's choices of --image-format, --image-source and --audio-format.
var (
	aiperfImageFormats = map[string]choice{
		"png": {value: scenarios.ImagePNG}, "jpeg": {value: scenarios.ImageJPEG}, "random": {value: scenarios.ImageRandom},
	}
	aiperfImageSources = map[string]choice{
		"noise":  {value: "noise"},
		"assets": {why: "bench does not ship AIPerf's bundled images; give --image-source a directory of images instead"},
	}
	aiperfImageSamplings = map[string]choice{
		scenarios.SamplingRandom: {value: scenarios.SamplingRandom}, scenarios.SamplingShuffle: {value: scenarios.SamplingShuffle},
		scenarios.SamplingSequential: {value: scenarios.SamplingSequential},
	}
	aiperfAudioFormats = map[string]choice{
		"wav": {value: scenarios.AudioWAV},
		"mp3": {value: scenarios.AudioMP3},
	}
)

// imageSource is --image-source: AIPerf's choices, or as in AIPerf
// anything else is a directory of images, checked with the scenario.
type imageSource struct{ aiperfChoice }

func (s *imageSource) Set(v string) error {
	if _, known := s.choices[normalizeChoice(v)]; !known {
		*s.target = v
		return nil
	}
	return s.aiperfChoice.Set(v)
}

func addMediaFlags(flag func(name, help string) *kingpin.FlagClause, set map[string]*bool) *mediaFlags {
	m := &mediaFlags{set: set}
	flag("image-width-mean", "Mean width in pixels of the noise images each chat request carries, with --image-height-mean (both > 0 turn images on, as AIPerf).").Float64Var(&m.widthMean)
	flag("image-width-stddev", "Standard deviation of the image width; each image's is drawn normally, rounded up, at least 1.").Float64Var(&m.widthStddev)
	flag("image-height-mean", "Mean height in pixels of the images.").Float64Var(&m.heightMean)
	flag("image-height-stddev", "Standard deviation of the image height.").Float64Var(&m.heightStddev)
	flag("image-batch-size", "Images per request (0: none); also --batch-size-image.").Default("1").IntVar(&m.imageBatch)
	flag("image-format", "png, jpeg, or random (each image PNG or JPEG at random).").Default("png").SetValue(&aiperfChoice{what: "image format", flag: "--image-format", choices: aiperfImageFormats, target: &m.imageFormat})
	flag("image-source", "noise (images of random pixels) or a directory of images (PNG, JPEG, GIF, BMP, TIFF, WebP), each resized to the drawn size; a file that cannot be decoded is skipped.").Default("noise").SetValue(&imageSource{aiperfChoice{what: "image source", flag: "--image-source", choices: aiperfImageSources, target: &m.imageSource}})
	flag("image-source-sampling", "How --image-source DIRECTORY's files are picked: random-with-replacement, shuffle-cycle (each once per shuffled pass) or sequential-cycle (in name order, wrapping).").Default(scenarios.SamplingRandom).SetValue(&aiperfChoice{what: "image source sampling", flag: "--image-source-sampling", choices: aiperfImageSamplings, target: &m.imageSampling})
	flag("audio-length-mean", "Mean duration in seconds of the noise audio clips each chat request carries (> 0 turns audio on, as AIPerf).").Float64Var(&m.lengthMean)
	flag("audio-length-stddev", "Standard deviation of the clip duration; each is drawn normally, redrawn below 0.01 s.").Float64Var(&m.lengthStddev)
	flag("audio-batch-size", "Audio clips per request (0: none); also --batch-size-audio.").Default("1").IntVar(&m.audioBatch)
	flag("audio-format", "wav (uncompressed PCM) or mp3 (MPEG audio Layer III; bench's clips are digital silence of the drawn length where AIPerf's are noise; rates 8 to 48 kHz, MPEG audio's nine).").Default("wav").SetValue(&aiperfChoice{what: "audio format", flag: "--audio-format", choices: aiperfAudioFormats, target: &m.audioFormat})
	flag("audio-depths", "Bits per sample (8, 16, 24, 32) of a wav clip (an mp3 has none; the value is checked, as AIPerf); each clip takes one at random; repeat the flag for several. Default 16.").StringsVar(&m.depths)
	flag("audio-sample-rates", "Sample rates in kHz (values above 96 are read as Hz, as AIPerf); each clip takes one at random; repeat the flag for several. Default 16.").StringsVar(&m.rates)
	flag("audio-num-channels", "1 (mono) or 2 (stereo).").Default("1").IntVar(&m.channels)
	return m
}

var (
	imageFlags = []string{"image-width-mean", "image-width-stddev", "image-height-mean", "image-height-stddev", "image-batch-size", "image-format",
		"image-source", "image-source-sampling"}
	audioFlags = []string{"audio-length-mean", "audio-length-stddev", "audio-batch-size", "audio-format", "audio-depths", "audio-sample-rates", "audio-num-channels"}
)

// given names the first of flags the user gave; "" for none.
func (m *mediaFlags) given(flags []string) string {
	for _, f := range flags {
		if *m.set[f] {
			return f
		}
	}
	return ""
}

// on reports whether the flags send images or audio: as AIPerf, images
// need both sides and audio a length, and either a batch above 0.
func (m *mediaFlags) on() (images, audio bool) {
	return m.widthMean > 0 && m.heightMean > 0 && m.imageBatch > 0, m.lengthMean > 0 && m.audioBatch > 0
}

// apply adds the images and audio to s, the synthetic dataset at path, of
// a run against endpoint, noting the flags that send nothing.
func (m *mediaFlags) apply(b *benchScenario, s *scenarios.Synthetic, path, endpoint string) error {
	images, audio := m.on()
	if (images || audio) && endpoint != scenarios.DefaultEndpoint {
		return fmt.Errorf("--image-* and --audio-* send content parts, which only --endpoint-type %s carries, not %s", scenarios.DefaultEndpoint, endpoint)
	}
	if f := m.given(imageFlags); f != "" && !images {
		b.notes = append(b.notes, fmt.Sprintf("--%s: no images are sent without --image-width-mean and --image-height-mean above 0 and --image-batch-size above 0, as in AIPerf", f))
	}
	if f := m.given(audioFlags); f != "" && !audio {
		b.notes = append(b.notes, fmt.Sprintf("--%s: no audio is sent without --audio-length-mean and --audio-batch-size above 0, as in AIPerf", f))
	}
	field := func(name, flag string) { b.set(path+"."+name, "--"+flag) }
	if images {
		s.Images = &scenarios.Images{BatchSize: m.imageBatch, Format: m.imageFormat,
			Width:  scenarios.Lengths{Mean: m.widthMean, Stddev: m.widthStddev},
			Height: scenarios.Lengths{Mean: m.heightMean, Stddev: m.heightStddev}}
		for _, f := range [][2]string{{"batch_size", "image-batch-size"}, {"format", "image-format"}, {"width.mean", "image-width-mean"},
			{"width.stddev", "image-width-stddev"}, {"height.mean", "image-height-mean"}, {"height.stddev", "image-height-stddev"}} {
			field("images."+f[0], f[1])
		}
		if m.imageSource != "noise" {
			s.Images.Source = m.imageSource
			field("images.source", "image-source")
		}
		if *m.set["image-source-sampling"] {
			s.Images.Sampling = m.imageSampling
			field("images.sampling", "image-source-sampling")
		}
	}
	if !audio {
		return nil
	}
	a := &scenarios.Audio{BatchSize: m.audioBatch, Format: m.audioFormat, Channels: m.channels,
		Length: scenarios.Seconds{Mean: m.lengthMean, Stddev: m.lengthStddev}, SampleRates: []float64{16}, Depths: []int{16}}
	if len(m.rates) > 0 {
		a.SampleRates = nil
		for _, v := range m.rates {
			r, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("--audio-sample-rates %q: want a rate in kHz, e.g. 16 or 44.1", v)
			}
			if r > 96 { // AIPerf's: Hz
				r /= 1000
			}
			a.SampleRates = append(a.SampleRates, r)
		}
	}
	if len(m.depths) > 0 {
		a.Depths = nil
		for _, v := range m.depths {
			d, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("--audio-depths %q: want bits per sample, 8, 16, 24 or 32", v)
			}
			a.Depths = append(a.Depths, d)
		}
	}
	s.Audio = a
	for _, f := range [][2]string{{"batch_size", "audio-batch-size"}, {"format", "audio-format"}, {"channels", "audio-num-channels"},
		{"length.mean", "audio-length-mean"}, {"length.stddev", "audio-length-stddev"}, {"sample_rates", "audio-sample-rates"}, {"depths", "audio-depths"}} {
		field("audio."+f[0], f[1])
	}
	return nil
}
