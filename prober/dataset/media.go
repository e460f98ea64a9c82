package dataset

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"hash/fnv"
	"image"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/inferprobe/inferprobe/mp3"
	"github.com/inferprobe/inferprobe/scenarios"
)

// Media is what one request carries besides its text: images (noise, or
// a source directory's resized) and noise audio clips, drawn as AIPerf
// 0.13 draws them (its ImageGenerator and AudioGenerator), or a dataset
// file entry's (mediaFiles).
type Media struct {
	// Images are data URLs: data:image/png;base64,… or data:image/jpeg;…;
	// a file's may be URLs too.
	Images []string
	Audio  []Clip
	// Key identifies the set (a hash of its files), for the run's digest.
	Key string
	// encoded is what Encoded returns, made once: the set is shared by
	// every request that carries it.
	encodeOnce sync.Once
	encoded    []byte
}

// Encoded is encode(m), computed on first use and kept: an endpoint's
// encoding of the set (the chat API's content parts), so that a request
// carrying it does not encode megabytes of base64 again.
func (m *Media) Encoded(encode func(*Media) []byte) []byte {
	m.encodeOnce.Do(func() { m.encoded = encode(m) })
	return m.encoded
}

// Clip is one audio clip.
type Clip struct {
	// Data is the file, base64-encoded; Format its format (wav or mp3).
	Data, Format string
	// Seconds is the clip's drawn duration; 0 for a file's, whose duration
	// AIPerf does not report either.
	Seconds float64
}

// AudioSeconds is the duration of the first clip, the one AIPerf reports
// as a request's audio_duration; 0 without audio.
func (m *Media) AudioSeconds() float64 {
	if m == nil || len(m.Audio) == 0 {
		return 0
	}
	return m.Audio[0].Seconds
}

// MediaEntries is how many distinct media sets a source draws, before its
// run: one per pool entry, or without a pool (or past this many entries)
// 100, the entries of AIPerf's synthetic dataset; request or entry k
// carries set k mod MediaEntries.
const MediaEntries = 100

// mediaPool is the media sets of a synthetic source.
type mediaPool struct {
	sets []*Media
	next int
}

// newMediaPool draws the sets of s, each from its own stream of the seed
// alone (and a source directory's files picked in set order from one), so
// that a warmup sends the images its run then sends. The source
// directory's files are read here, before the run, never during it.
func newMediaPool(s scenarios.Synthetic, seed uint64) (*mediaPool, error) {
	n := MediaEntries
	if s.Entries > 0 {
		n = min(s.Entries, MediaEntries)
	}
	var src *sourceImages
	if s.Images != nil && s.Images.Source != "" {
		var err error
		if src, err = newSourceImages(*s.Images, seed); err != nil {
			return nil, err
		}
	}
	p := &mediaPool{sets: make([]*Media, n)}
	for k := range p.sets {
		m, err := drawMedia(s, indexed(seed, sharedStreams+"/media", k), src)
		if err != nil {
			return nil, err
		}
		p.sets[k] = m
	}
	return p, nil
}

// entry is the set of turn t of pool entry i, or for i -1 (no pool) the
// next set; a pool entry's turns take consecutive sets.
func (p *mediaPool) entry(i, turn int) *Media {
	if i < 0 {
		i = p.next
		p.next++
	} else {
		i += turn
	}
	return p.sets[i%len(p.sets)]
}

func drawMedia(s scenarios.Synthetic, rng *rand.Rand, src *sourceImages) (*Media, error) {
	m := &Media{}
	if im := s.Images; im != nil {
		for range im.BatchSize {
			url, err := drawImage(rng, *im, src)
			if err != nil {
				return nil, err
			}
			m.Images = append(m.Images, url)
		}
	}
	if a := s.Audio; a != nil {
		for range a.BatchSize {
			m.Audio = append(m.Audio, noiseClip(rng, *a))
		}
	}
	m.setKey()
	return m, nil
}

// setKey sets m.Key from its images and clips.
func (m *Media) setKey() {
	h := fnv.New64a()
	for _, url := range m.Images {
		h.Write([]byte(url))
	}
	for _, c := range m.Audio {
		h.Write([]byte(c.Data))
	}
	m.Key = strconv.FormatUint(h.Sum64(), 16)
}

// drawImage draws one image as a data URL: its format (for random), width
// and height, then its pixels: uniformly random RGB, as AIPerf's noise
// source, or src's next file resized to that size.
func drawImage(rng *rand.Rand, cfg scenarios.Images, src *sourceImages) (string, error) {
	format := cfg.Format
	if format == scenarios.ImageRandom {
		format = []string{scenarios.ImagePNG, scenarios.ImageJPEG}[rng.IntN(2)]
	}
	side := func(l scenarios.Lengths) int {
		return min(positiveInteger(rng, l.Mean, l.Stddev), scenarios.MaxImageSide)
	}
	w, h := side(cfg.Width), side(cfg.Height)
	var img image.Image
	if src == nil {
		noise := image.NewRGBA(image.Rect(0, 0, w, h))
		for i := 0; i < len(noise.Pix); i += 4 {
			v := rng.Uint32()
			noise.Pix[i], noise.Pix[i+1], noise.Pix[i+2], noise.Pix[i+3] = byte(v), byte(v>>8), byte(v>>16), 0xff
		}
		img = noise
	} else {
		resized, err := src.image(w, h)
		if err != nil {
			return "", err
		}
		if format == scenarios.ImageJPEG {
			// JPEG has no alpha: keep the colours, as Pillow's convert("RGB")
			// does, rather than blend them toward black.
			for i := 3; i < len(resized.Pix); i += 4 {
				resized.Pix[i] = 0xff
			}
		}
		img = resized
	}
	var buf bytes.Buffer
	if format == scenarios.ImageJPEG {
		// Quality 85, as AIPerf's encode_image asks Pillow for; Go's encoder
		// always halves the chroma, where AIPerf keeps it whole, so a JPEG
		// comes out a little smaller than AIPerf's.
		_ = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 85}) // a bytes.Buffer never fails
	} else {
		_ = png.Encode(&buf, img)
	}
	return "data:image/" + format + ";base64," + base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// noiseClip draws one clip: its length, sample rate and depth, then
// Gaussian noise (σ 0.3, clipped to ±1) in every channel, as AIPerf's; or
// for mp3, where AIPerf's LAME encodes that noise, digital silence of the
// same length (package mp3 says why), its depth unused as in AIPerf.
func noiseClip(rng *rand.Rand, cfg scenarios.Audio) Clip {
	seconds := cfg.Length.Mean
	if cfg.Length.Stddev > 0 {
		// AIPerf's sample_normal: redrawn below 0.01 s, the mean if none lands.
		for range 10000 {
			if x := cfg.Length.Mean + rng.NormFloat64()*cfg.Length.Stddev; x >= 0.01 {
				seconds = x
				break
			}
		}
	}
	seconds = min(seconds, scenarios.MaxAudioSeconds)
	rate := int(cfg.SampleRates[rng.IntN(len(cfg.SampleRates))] * 1000)
	depth := cfg.Depths[rng.IntN(len(cfg.Depths))]
	frames := int(seconds * float64(rate))
	if cfg.Format == scenarios.AudioMP3 {
		return Clip{Data: base64.StdEncoding.EncodeToString(mp3.Silence(frames, rate, cfg.Channels)), Format: scenarios.AudioMP3, Seconds: seconds}
	}
	width := depth / 8
	data := make([]byte, 44, 44+frames*cfg.Channels*width)
	for range frames * cfg.Channels {
		v := max(-1, min(1, rng.NormFloat64()*0.3))
		switch depth {
		case 8: // unsigned, as WAV's 8-bit PCM
			data = append(data, byte(int(math.Round(v*127))+128))
		case 16:
			data = binary.LittleEndian.AppendUint16(data, uint16(int16(v*math.MaxInt16)))
		case 24:
			s := uint32(int32(v * (1<<23 - 1)))
			data = append(data, byte(s), byte(s>>8), byte(s>>16))
		case 32:
			data = binary.LittleEndian.AppendUint32(data, uint32(int32(v*math.MaxInt32)))
		}
	}
	wavHeader(data[:44], len(data)-44, rate, cfg.Channels, depth)
	return Clip{Data: base64.StdEncoding.EncodeToString(data), Format: scenarios.AudioWAV, Seconds: seconds}
}

// wavHeader writes the 44-byte RIFF WAVE header of PCM samples into h.
func wavHeader(h []byte, size, rate, channels, depth int) {
	le := binary.LittleEndian
	block := channels * depth / 8
	copy(h[0:], "RIFF")
	le.PutUint32(h[4:], uint32(36+size))
	copy(h[8:], "WAVEfmt ")
	le.PutUint32(h[16:], 16)
	le.PutUint16(h[20:], 1) // PCM
	le.PutUint16(h[22:], uint16(channels))
	le.PutUint32(h[24:], uint32(rate))
	le.PutUint32(h[28:], uint32(rate*block))
	le.PutUint16(h[32:], uint16(block))
	le.PutUint16(h[34:], uint16(depth))
	copy(h[36:], "data")
	le.PutUint32(h[40:], uint32(size))
}
