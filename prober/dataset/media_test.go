package dataset

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"image"
	"image/jpeg"
	"image/png"
	"reflect"
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/mp3"
	"github.com/inferprobe/inferprobe/scenarios"
)

// mediaConfig is a synthetic dataset with images and audio of the sizes
// AIPerf's e2e command lines ask for.
func mediaConfig() scenarios.Synthetic {
	return scenarios.Synthetic{
		Images: &scenarios.Images{BatchSize: 2, Format: scenarios.ImageRandom,
			Width: scenarios.Lengths{Mean: 64, Stddev: 8}, Height: scenarios.Lengths{Mean: 48}},
		Audio: &scenarios.Audio{BatchSize: 1, Format: scenarios.AudioWAV, Channels: 2,
			Length: scenarios.Seconds{Mean: 0.5, Stddev: 0.1}, SampleRates: []float64{16, 44.1}, Depths: []int{8, 16, 24, 32}},
	}
}

// TestMediaPrompts: every request carries the images and clips asked for,
// valid PNG, JPEG and WAV files of the drawn sizes, and the same seed sends
// the same media while another seed does not.
func TestMediaPrompts(t *testing.T) {
	const n = MediaEntries + 5 // past the pool: it cycles
	draw := func(seed uint64) []*Media {
		src := newWorkloadSource(t, mediaConfig(), nil, seed)
		var out []*Media
		for range n {
			it, err := src.Next()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, it.Prompt.Media)
		}
		return out
	}
	a := draw(7)
	if b := draw(7); !reflect.DeepEqual(a, b) {
		t.Error("the same seed sent other media")
	}
	if c := draw(8); reflect.DeepEqual(a[0], c[0]) {
		t.Error("another seed sent the same media")
	}
	if a[MediaEntries] != a[0] {
		t.Errorf("request %d carries other media than request 0: the pool of %d should cycle", MediaEntries, MediaEntries)
	}
	formats, widths, rates, depths := map[string]bool{}, map[int]bool{}, map[uint32]bool{}, map[uint16]bool{}
	for i, m := range a {
		if len(m.Images) != 2 || len(m.Audio) != 1 {
			t.Fatalf("request %d: %d images, %d clips; want 2 and 1", i, len(m.Images), len(m.Audio))
		}
		for _, url := range m.Images {
			head, data, _ := strings.Cut(url, ",")
			raw, err := base64.StdEncoding.DecodeString(data)
			if err != nil {
				t.Fatal(err)
			}
			var img image.Image
			switch head {
			case "data:image/png;base64":
				img, err = png.Decode(bytes.NewReader(raw))
			case "data:image/jpeg;base64":
				img, err = jpeg.Decode(bytes.NewReader(raw))
			default:
				t.Fatalf("request %d: image URL starts %q", i, head)
			}
			if err != nil {
				t.Fatalf("request %d: %s: %v", i, head, err)
			}
			formats[head] = true
			size := img.Bounds().Size()
			widths[size.X] = true
			if size.X < 24 || size.X > 104 || size.Y != 48 {
				t.Errorf("request %d: image %v, want about 64 wide and 48 high", i, size)
			}
		}
		c := m.Audio[0]
		raw, err := base64.StdEncoding.DecodeString(c.Data)
		if err != nil || c.Format != "wav" || string(raw[:4]) != "RIFF" || string(raw[8:16]) != "WAVEfmt " || string(raw[36:40]) != "data" {
			t.Fatalf("request %d: clip %q is no WAV file: %v", i, raw[:min(len(raw), 44)], err)
		}
		le := binary.LittleEndian
		rate, depth, channels := le.Uint32(raw[24:]), le.Uint16(raw[34:]), le.Uint16(raw[22:])
		rates[rate], depths[depth] = true, true
		byteRate := le.Uint32(raw[28:])
		size := le.Uint32(raw[40:])
		if channels != 2 || byteRate != rate*uint32(depth/8)*2 || int(size) != len(raw)-44 || le.Uint32(raw[4:]) != uint32(len(raw)-8) {
			t.Errorf("request %d: WAV header %v inconsistent with %d bytes", i, raw[:44], len(raw))
		}
		if got := float64(size) / float64(byteRate); got < c.Seconds-0.001 || got > c.Seconds || c.Seconds < 0.01 {
			t.Errorf("request %d: %v s of samples, drawn %v s", i, got, c.Seconds)
		}
		if m.AudioSeconds() != c.Seconds {
			t.Errorf("request %d: AudioSeconds %v, want the first clip's %v", i, m.AudioSeconds(), c.Seconds)
		}
	}
	if len(formats) != 2 || len(widths) < 5 || len(rates) != 2 || len(depths) != 4 {
		t.Errorf("drawn formats %v, %d widths, rates %v, depths %v: want both formats, several widths, every rate and depth", formats, len(widths), rates, depths)
	}
}

// TestMP3Clips: with format mp3 each clip is an MP3 stream of the drawn
// rate and channels that plays exactly the drawn length's samples (as
// AIPerf's, int(seconds × rate)), and the same seed draws the same clips.
func TestMP3Clips(t *testing.T) {
	cfg := mediaConfig()
	cfg.Images, cfg.Audio.Format, cfg.Audio.SampleRates = nil, scenarios.AudioMP3, []float64{8, 22.05, 44.1}
	draw := func() []*Media {
		src := newWorkloadSource(t, cfg, nil, 7)
		var out []*Media
		for range 30 {
			it, err := src.Next()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, it.Prompt.Media)
		}
		return out
	}
	a := draw()
	if !reflect.DeepEqual(a, draw()) {
		t.Error("the same seed sent other clips")
	}
	rates := map[int]bool{}
	for i, m := range a {
		c := m.Audio[0]
		raw, err := base64.StdEncoding.DecodeString(c.Data)
		if err != nil || c.Format != "mp3" {
			t.Fatalf("request %d: clip of format %q: %v", i, c.Format, err)
		}
		s, err := mp3.Read(raw)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		rates[s.SampleRate] = true
		if s.Channels != 2 || s.Samples != int(c.Seconds*float64(s.SampleRate)) {
			t.Errorf("request %d: %d channels, %d samples at %d Hz; want 2 and %v s", i, s.Channels, s.Samples, s.SampleRate, c.Seconds)
		}
	}
	if len(rates) != 3 {
		t.Errorf("drawn rates %v, want 8000, 22050 and 44100", rates)
	}
}

// TestMediaOfPoolEntries: an entry of a pool carries the same media each
// time it is sent, as AIPerf's dataset entries do.
func TestMediaOfPoolEntries(t *testing.T) {
	s := mediaConfig()
	s.Entries = 3
	src := newWorkloadSource(t, s, nil, 1)
	byText := map[string]*Media{}
	for range 12 {
		it, err := src.Next()
		if err != nil {
			t.Fatal(err)
		}
		if m, ok := byText[it.Prompt.Text]; ok && m != it.Prompt.Media {
			t.Errorf("entry %.20q… sent with other media than before", it.Prompt.Text)
		}
		byText[it.Prompt.Text] = it.Prompt.Media
	}
	if len(byText) != 3 {
		t.Errorf("%d distinct entries, want 3", len(byText))
	}
}

// TestMediaOfConversations: in a multi-turn conversation every turn carries
// a set of its own, and each later turn sends the earlier user messages
// with their sets again, as AIPerf's history does.
func TestMediaOfConversations(t *testing.T) {
	s := mediaConfig()
	s.Conversation = &scenarios.Conversation{Turns: scenarios.Lengths{Mean: 3}}
	src := newWorkloadSource(t, s, nil, 1)
	it, err := src.Next()
	if err != nil {
		t.Fatal(err)
	}
	if len(it.Turns) != 2 {
		t.Fatalf("%d later turns, want 2", len(it.Turns))
	}
	turns := []Prompt{it.Prompt, it.Turns[0].Prompt, it.Turns[1].Prompt}
	seen := map[*Media]bool{}
	for i, p := range turns {
		if p.Media == nil || seen[p.Media] {
			t.Fatalf("turn %d carries media %p, want a set no earlier turn carried", i, p.Media)
		}
		seen[p.Media] = true
		var users []Message
		for _, m := range p.Messages {
			if m.Role == "user" {
				users = append(users, m)
			}
		}
		if i == 0 {
			continue // a lone first message is sent as text
		}
		if len(users) != i+1 {
			t.Fatalf("turn %d has %d user messages, want %d", i, len(users), i+1)
		}
		for j, m := range users {
			if m.Media != turns[j].Media {
				t.Errorf("turn %d: user message %d carries %p, want turn %d's set %p", i, j, m.Media, j, turns[j].Media)
			}
		}
	}
}
