package mp3

import (
	"bytes"
	"testing"
)

// TestSilenceFrames reads back the frames Silence writes, for every rate
// and both channel counts: each header's version, rate, channels, bitrate
// and size, frames back to back to the end, and the Info tag's samples
// exactly the length asked for, the last frame's rest dropped as padding.
func TestSilenceFrames(t *testing.T) {
	for _, rate := range SampleRates {
		for channels := 1; channels <= 2; channels++ {
			for _, n := range []int{1, 577, int(0.2 * float64(rate)), 3 * rate} {
				b := Silence(n, rate, channels)
				s, err := Read(b)
				if err != nil {
					t.Fatalf("%d Hz, %d channels, %d samples: %v", rate, channels, n, err)
				}
				spf := 576
				if rate >= 32000 {
					spf = 1152
				}
				info, _ := ParseHeader(b)
				size := info.Size
				for _, h := range s.Frames {
					want := clipKbps[rate][channels-1]
					if h.SampleRate != rate || h.Channels != channels || h.Samples() != spf || h.MPEG1 != (spf == 1152) || h.Kbps != want ||
						h.Size != frameSize(h.MPEG1, want, rate) || h.crc || h.pad {
						t.Fatalf("%d Hz, %d channels: frame %+v, want %d kbps, %d samples", rate, channels, h, want, spf)
					}
					if !bytes.Equal(b[size+4:size+h.Size], make([]byte, h.Size-4)) {
						t.Fatalf("%d Hz, %d channels: a frame's side info or main data is not zero: part2_3_length must be 0", rate, channels)
					}
					size += h.Size
				}
				frames := (n + decoderDelay + spf - 1) / spf
				if len(s.Frames) != frames || s.Samples != n || size != len(b) {
					t.Errorf("%d Hz, %d channels, %d samples: %d frames of %d bytes in %d, playing %d samples; want %d frames, %d samples",
						rate, channels, n, len(s.Frames), size, len(b), s.Samples, frames, n)
				}
				if s.Samples+decoderDelay > frames*spf || s.Samples+decoderDelay <= (frames-1)*spf {
					t.Errorf("%d Hz: %d frames for %d samples past the decoder's delay; want the fewest that hold them", rate, frames, n)
				}
			}
		}
	}
}

// TestParseHeader reads a header AIPerf 0.13's LAME wrote (44.1 kHz mono,
// 128 kbps) and refuses what is not a Layer III header.
func TestParseHeader(t *testing.T) {
	h, err := ParseHeader([]byte{0xff, 0xfb, 0x90, 0xc4})
	if err != nil || !h.MPEG1 || h.SampleRate != 44100 || h.Kbps != 128 || h.Channels != 1 || h.Size != 417 || h.Samples() != 1152 {
		t.Errorf("ParseHeader(ff fb 90 c4) = %+v, %v; want MPEG-1, 44.1 kHz, 128 kbps, mono, 417 bytes", h, err)
	}
	h, err = ParseHeader([]byte{0xff, 0xe3, 0x48, 0x64})
	if err != nil || h.MPEG1 || h.SampleRate != 8000 || h.Kbps != 32 || h.Channels != 2 || h.Size != 288 || h.Samples() != 576 {
		t.Errorf("ParseHeader(ff e3 48 64) = %+v, %v; want MPEG-2.5, 8 kHz, 32 kbps, stereo, 288 bytes", h, err)
	}
	for _, b := range [][]byte{{0xff, 0xfd, 0x90, 0xc4}, {0xff, 0xfb, 0xf0, 0xc4}, {0xff, 0xfb, 0x9c, 0xc4}, {0xff, 0xeb, 0x90, 0xc4}, {'R', 'I', 'F', 'F'}, {0xff}} {
		if h, err := ParseHeader(b); err == nil {
			t.Errorf("ParseHeader(% x) = %+v, want an error (not Layer III, bad bitrate or rate, reserved version, no sync)", b, h)
		}
	}
}

// TestReadRefuses: a truncated stream, or one whose rate changes, is not
// read as a duration.
func TestReadRefuses(t *testing.T) {
	b := Silence(16000, 16000, 1)
	if _, err := Read(b[:len(b)-1]); err == nil {
		t.Error("Read of a stream cut short: no error")
	}
	if _, err := Read(append(b[:len(b):len(b)], Silence(100, 8000, 1)[4:]...)); err == nil {
		t.Error("Read of a stream with garbage after its frames: no error")
	}
	if _, err := Read(append(b[:len(b):len(b)], Silence(2000, 22050, 1)...)); err == nil {
		t.Error("Read of a stream whose rate changes: no error")
	}
}
