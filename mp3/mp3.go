// Package mp3 writes and reads the frame headers of MPEG audio Layer III
// streams: bench's --audio-format mp3 clips, and the simulator's measure
// of an mp3 clip's duration. It encodes no sound: Go has no well-kept
// pure-Go MP3 encoder, so a clip is digital silence, frames that carry no
// main data (part2_3_length 0), which every decoder plays as zeros.
//
// Its one reference is the format (ISO/IEC 11172-3, 13818-3, and the
// MPEG-2.5 extension) and the Xing/LAME "Info" tag's public layout.
package mp3

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// SampleRates are the rates, in Hz, that MPEG audio has and AIPerf 0.13
// allows for mp3: MPEG-1's, MPEG-2's and MPEG-2.5's, three each.
var SampleRates = []int{8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000}

// Versions, as the header's two version bits.
const (
	mpeg25 = 0
	mpeg2  = 2
	mpeg1  = 3
)

// rates are the sample rates of each version, by the header's rate index.
var rates = map[int][]int{mpeg1: {44100, 48000, 32000}, mpeg2: {22050, 24000, 16000}, mpeg25: {11025, 12000, 8000}}

// bitrates are Layer III's bitrates in kbps, by the header's bitrate index
// (0, free format, and 15, forbidden, are not written or read).
var bitrates = map[bool][]int{
	true:  {0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320}, // MPEG-1
	false: {0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},     // MPEG-2 and 2.5
}

// clipKbps is the bitrate of a clip's frames, by sample rate, mono and
// stereo: the bitrate nearest what AIPerf 0.13's clips of 5 s Gaussian
// noise average (libsndfile's LAME, VBR), so that a silent clip weighs on
// the wire about what AIPerf's does.
var clipKbps = map[int][2]int{
	8000: {16, 64}, 11025: {24, 64}, 12000: {24, 64},
	16000: {32, 144}, 22050: {40, 160}, 24000: {48, 160},
	32000: {64, 256}, 44100: {80, 320}, 48000: {80, 320},
}

// decoderDelay is the samples a Layer III decoder's filter bank outputs
// before the first encoded one; the Info tag's delay leaves it out and
// decoders (mpg123, FFmpeg) add it.
const decoderDelay = 529

// Header is one frame's header.
type Header struct {
	MPEG1      bool // else MPEG-2 or 2.5: 576 samples a frame, not 1152
	SampleRate int  // Hz
	Kbps       int
	Channels   int
	Size       int // bytes, the header included
	crc        bool
	pad        bool
}

// Samples is the samples per channel a frame holds.
func (h Header) Samples() int {
	if h.MPEG1 {
		return 1152
	}
	return 576
}

// sideInfo is the length of the side information that follows the header
// (and its CRC): a frame's main data, and the Info tag, begin past it.
func (h Header) sideInfo() int {
	switch {
	case h.MPEG1 && h.Channels == 2:
		return 32
	case h.MPEG1, h.Channels == 2:
		return 17
	}
	return 9
}

// ParseHeader reads the frame header at the start of b.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < 4 || b[0] != 0xff || b[1]&0xe0 != 0xe0 {
		return Header{}, errors.New("no MPEG audio frame sync")
	}
	version, layer := int(b[1]>>3&3), b[1]>>1&3
	bitrate, rate := int(b[2]>>4), int(b[2]>>2&3)
	if version == 1 || layer != 1 || bitrate == 0 || bitrate == 15 || rate == 3 {
		return Header{}, fmt.Errorf("not a Layer III frame header of a known version, bitrate and rate: % x", b[:4])
	}
	h := Header{MPEG1: version == mpeg1, SampleRate: rates[version][rate], Channels: 2, crc: b[1]&1 == 0, pad: b[2]&2 != 0}
	h.Kbps = bitrates[h.MPEG1][bitrate]
	if b[3]>>6 == 3 {
		h.Channels = 1
	}
	h.Size = frameSize(h.MPEG1, h.Kbps, h.SampleRate)
	if h.pad {
		h.Size++
	}
	return h, nil
}

// frameSize is the bytes of a frame without a padding slot.
func frameSize(mpeg1 bool, kbps, rate int) int {
	if mpeg1 {
		return 144000 * kbps / rate
	}
	return 72000 * kbps / rate
}

// header is h's four bytes: no CRC, no padding slot (where a frame's
// bytes are not whole, at 11.025, 22.05 and 44.1 kHz, the stream runs up to
// 0.5 % under its nominal bitrate), mono or plain stereo.
func (h Header) header() []byte {
	version := mpeg25
	for v, r := range rates {
		if slices.Contains(r, h.SampleRate) {
			version = v
		}
	}
	mode := byte(0)
	if h.Channels == 1 {
		mode = 3
	}
	return []byte{0xff, 0xe0 | byte(version)<<3 | 1<<1 | 1,
		byte(slices.Index(bitrates[h.MPEG1], h.Kbps))<<4 | byte(slices.Index(rates[version], h.SampleRate))<<2,
		mode << 6}
}

// Info tag layout: "Info", flags, frames, bytes, a 100-entry seek table,
// a quality; then LAME's 36-byte extension, whose encoder delay and
// padding are what make a decoder play exactly the clip's samples.
const (
	xingLen   = 120
	lameLen   = 36
	lameDelay = 21 // offset in the extension of delay and padding, 12 bits each
	lameCRC   = 34 // offset of the CRC-16 of the frame's bytes before it
)

// Silence is a Layer III stream of n samples per channel at rate (one of
// SampleRates) and 1 or 2 channels, of digital silence: an Info frame,
// then as many silent frames as hold n samples past the decoder's delay.
// The last frame's samples past n are the padding that the Info tag
// tells a decoder to drop, so that one which reads it (mpg123, which
// libsndfile uses; FFmpeg only for tags that name LAME) plays exactly n;
// one that ignores the tag plays the whole frames, under one frame more.
func Silence(n, rate, channels int) []byte {
	h := Header{MPEG1: rate >= 32000, SampleRate: rate, Channels: channels, Kbps: clipKbps[rate][channels-1]}
	h.Size = frameSize(h.MPEG1, h.Kbps, rate)
	frames := (n + decoderDelay + h.Samples() - 1) / h.Samples()
	padding := frames*h.Samples() - n

	// The Info frame: the smallest bitrate whose frame holds the tag.
	info := h
	tag := 4 + h.sideInfo()
	for _, kbps := range bitrates[h.MPEG1][1:] {
		info.Kbps, info.Size = kbps, frameSize(h.MPEG1, kbps, rate)
		if info.Size >= tag+xingLen+lameLen {
			break
		}
	}
	out := make([]byte, info.Size+frames*h.Size)
	copy(out, info.header())
	t := out[tag:]
	be := binary.BigEndian
	copy(t, "Info")
	be.PutUint32(t[4:], 0xf) // frames, bytes, seek table and quality present
	be.PutUint32(t[8:], uint32(frames))
	be.PutUint32(t[12:], uint32(len(out)))
	for i := range 100 { // a constant bitrate's seek table: linear
		t[16+i] = byte(i * 256 / 100)
	}
	lame := t[xingLen:]
	// The encoder's name, cut to the field's 9 bytes: mpg123 reads no
	// extension whose name is blank.
	copy(lame, "inferprob")
	lame[lameDelay], lame[lameDelay+1], lame[lameDelay+2] = 0, byte(padding>>8), byte(padding) // delay 0
	be.PutUint32(lame[28:], uint32(len(out)))
	crc := tag + xingLen + lameCRC
	be.PutUint16(out[crc:], crc16(out[:crc]))
	for i := range frames {
		copy(out[info.Size+i*h.Size:], h.header()) // side info and main data: zeros
	}
	return out
}

// crc16 is the Info tag's checksum: CRC-16/ARC (polynomial 0x8005,
// reflected, initial 0), as LAME writes it.
func crc16(b []byte) uint16 {
	var crc uint16
	for _, c := range b {
		crc ^= uint16(c)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0xa001
			} else {
				crc >>= 1
			}
		}
	}
	return crc
}

// Stream is what a Layer III stream's headers say of it.
type Stream struct {
	SampleRate, Channels int
	// Frames are its audio frames, the Info frame not counted.
	Frames []Header
	// Samples is the samples per channel it plays: its frames' less the
	// Info tag's encoder delay and padding, when it has one.
	Samples int
}

// Seconds is the stream's duration.
func (s Stream) Seconds() float64 { return float64(s.Samples) / float64(s.SampleRate) }

// Read walks the frames of an MP3 file, past an ID3v2 tag at its start.
// Every frame must follow the last, of the first one's version, rate and
// channels, and the last must end the file (an ID3v1 tag may follow).
func Read(b []byte) (Stream, error) {
	if len(b) >= 10 && string(b[:3]) == "ID3" { // its size is four 7-bit bytes
		b = b[min(len(b), 10+int(b[6])<<21|int(b[7])<<14|int(b[8])<<7|int(b[9])):]
	}
	var s Stream
	delay, padding := 0, 0
	for off := 0; off < len(b); {
		if len(b)-off == 128 && string(b[off:off+3]) == "TAG" {
			break
		}
		h, err := ParseHeader(b[off:])
		if err != nil {
			return s, fmt.Errorf("at byte %d: %w", off, err)
		}
		if off+h.Size > len(b) {
			return s, fmt.Errorf("at byte %d: a frame of %d bytes past the end, %d", off, h.Size, len(b))
		}
		if len(s.Frames) > 0 && (h.SampleRate != s.SampleRate || h.Channels != s.Channels) {
			return s, fmt.Errorf("at byte %d: a frame of %d Hz, %d channels after %d Hz, %d", off, h.SampleRate, h.Channels, s.SampleRate, s.Channels)
		}
		s.SampleRate, s.Channels = h.SampleRate, h.Channels
		frame := b[off : off+h.Size]
		if off == 0 {
			if d, p, ok := infoTag(h, frame); ok {
				delay, padding = d, p
				off += h.Size
				continue
			}
		}
		s.Frames = append(s.Frames, h)
		s.Samples += h.Samples()
		off += h.Size
	}
	if len(s.Frames) == 0 {
		return s, errors.New("no audio frame")
	}
	s.Samples = max(0, s.Samples-delay-padding)
	return s, nil
}

// infoTag reads the encoder delay and padding of a Xing or Info frame's
// LAME extension; ok is false when frame is an audio frame.
func infoTag(h Header, frame []byte) (delay, padding int, ok bool) {
	off := 4 + h.sideInfo()
	if h.crc {
		off += 2
	}
	if len(frame) < off+8 || string(frame[off:off+4]) != "Info" && string(frame[off:off+4]) != "Xing" {
		return 0, 0, false
	}
	flags := binary.BigEndian.Uint32(frame[off+4:])
	off += 8
	for _, f := range []struct {
		bit uint32
		len int
	}{{1, 4}, {2, 4}, {4, 100}, {8, 4}} {
		if flags&f.bit != 0 {
			off += f.len
		}
	}
	if len(frame) < off+lameLen {
		return 0, 0, true
	}
	d := frame[off+lameDelay:]
	return int(d[0])<<4 | int(d[1]>>4), int(d[1]&0xf)<<8 | int(d[2]), true
}
