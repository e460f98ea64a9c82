package simulator

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/mp3"
)

const chatStream = `{"stream":true,"ignore_eos":true,"max_tokens":20,"messages":[{"content":"x"}]}`

// With one decode slot, a second stream is admitted, and so gets its first
// token, only after the first has finished. The order is the order of the
// server's own writes, so the assertion cannot flake.
func TestConcurrencyLimitOrders(t *testing.T) {
	s, err := New(Config{Profile: Profile{TTFT: time.Millisecond, ITL: time.Millisecond}, MaxConcurrency: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	log := &eventLog{}
	a, b := newRecorder("a", log), newRecorder("b", log)
	aDone := serve(context.Background(), s.Handler(), a, "/v1/chat/completions", chatStream)
	waitFor(t, a.flushed, "the first stream's prelude") // a holds the slot
	bDone := serve(context.Background(), s.Handler(), b, "/v1/chat/completions", chatStream)
	waitFor(t, aDone, "the first stream")
	waitFor(t, bDone, "the second stream")

	events := log.snapshot()
	lastA, firstBToken := -1, -1
	for i, e := range events {
		if e.who == "a" {
			lastA = i
		}
		if e.who == "b" && firstBToken < 0 && strings.Contains(e.data, `"content":" `) {
			firstBToken = i
		}
	}
	if !strings.Contains(events[lastA].data, "[DONE]") {
		t.Fatalf("first stream did not finish: last event %q", events[lastA].data)
	}
	if firstBToken < 0 || firstBToken < lastA {
		t.Errorf("second stream's first token is event %d, first stream's [DONE] event %d", firstBToken, lastA)
	}
	for _, e := range events[:lastA] {
		if e.who == "b" {
			t.Errorf("second stream wrote %q before the first finished", e.data)
		}
	}
}

// A client that goes away mid-stream or while queued gives up its place at
// once: the next request gets the slot.
func TestClientGoneReleasesSlot(t *testing.T) {
	s, err := New(Config{Profile: Profile{ITL: time.Hour}, MaxConcurrency: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	log := &eventLog{}
	long := `{"stream":true,"ignore_eos":true,"max_tokens":3,"messages":[{"content":"x"}]}`

	// a streams its first token, then waits an hour for the second.
	aCtx, cancelA := context.WithCancel(context.Background())
	a := newRecorder("a", log)
	aDone := serve(aCtx, s.Handler(), a, "/v1/chat/completions", long)
	waitFor(t, a.flushed, "a's prelude")
	waitFor(t, a.flushed, "a's first token")

	// b queues behind a, then leaves.
	bCtx, cancelB := context.WithCancel(context.Background())
	b := newRecorder("b", log)
	bDone := serve(bCtx, s.Handler(), b, "/v1/chat/completions", long)
	cancelB()
	waitFor(t, bDone, "the queued request to give up")
	if b.status != 0 {
		t.Errorf("queued request that left got status %d", b.status)
	}

	cancelA()
	waitFor(t, aDone, "the streaming request to stop")

	if err := s.SetProfile(fast); err != nil {
		t.Fatal(err)
	}
	c := newRecorder("c", log)
	waitFor(t, serve(context.Background(), s.Handler(), c, "/v1/chat/completions", chatStream), "the next request")
	if events := log.snapshot(); !strings.Contains(events[len(events)-1].data, "[DONE]") {
		t.Errorf("next request did not complete: %q", events[len(events)-1].data)
	}
}

// Stalls and prefill delay a stream by at least their length. These are
// lower bounds measured from before the request starts, so a slow machine
// cannot fail them; where the stall falls is checked on the schedule
// itself, in TestGenerationSchedule.
func TestStallDelaysStream(t *testing.T) {
	const stall = 50 * time.Millisecond
	s, err := New(Config{Profile: Profile{ITL: 100 * time.Microsecond, StallRate: 1, StallDuration: stall}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := newRecorder("a", &eventLog{})
	start := time.Now()
	waitFor(t, serve(context.Background(), s.Handler(), r, "/v1/chat/completions", chatStream), "the stream")
	events := r.log.snapshot()
	if last := events[len(events)-1]; last.at.Sub(start) < stall || !strings.Contains(last.data, "[DONE]") {
		t.Errorf("stream ended %v after it started with %q, want a stall of at least %v", last.at.Sub(start), last.data, stall)
	}
}

func TestPrefillDelaysFirstToken(t *testing.T) {
	s, err := New(Config{Profile: Profile{PrefillPerToken: time.Millisecond}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := newRecorder("a", &eventLog{})
	body := `{"stream":true,"max_tokens":1,"messages":[{"content":"` + strings.Repeat("word ", 40) + `"}]}`
	start := time.Now()
	waitFor(t, serve(context.Background(), s.Handler(), r, "/v1/chat/completions", body), "the stream")
	events := r.log.snapshot() // prelude, first token, ...
	if wait := events[1].at.Sub(start); wait < 40*time.Millisecond {
		t.Errorf("first token %v after the request, want at least 40 prompt tokens x 1ms", wait)
	}
}

// TestMediaDelaysFirstToken: a chat request's images and WAV or MP3 audio
// add PrefillPerImage and PrefillPerAudioSecond to its time to first token.
func TestMediaDelaysFirstToken(t *testing.T) {
	s, err := New(Config{PrefillPerImage: 30 * time.Millisecond, PrefillPerAudioSecond: 40 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// One second of 8 kHz mono 8-bit WAV: a 44-byte header and 8000 samples.
	wav := make([]byte, 44+8000)
	copy(wav, "RIFF")
	copy(wav[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(wav[24:], 8000) // sample rate
	binary.LittleEndian.PutUint32(wav[28:], 8000) // byte rate
	image := `{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}`
	audio := `{"type":"input_audio","input_audio":{"data":"` + base64.StdEncoding.EncodeToString(wav) + `","format":"wav"}}`
	firstToken := func(content string) time.Duration {
		r := newRecorder("a", &eventLog{})
		body := `{"stream":true,"max_tokens":1,"messages":[{"role":"user","content":` + content + `}]}`
		start := time.Now()
		waitFor(t, serve(context.Background(), s.Handler(), r, "/v1/chat/completions", body), "the stream")
		return r.log.snapshot()[1].at.Sub(start) // prelude, first token, ...
	}
	if wait := firstToken(`[{"type":"text","text":"describe"},` + image + `,` + image + `,` + audio + `]`); wait < 100*time.Millisecond {
		t.Errorf("first token %v after a request of 2 images and 1 s of audio, want at least 2 x 30ms + 1 x 40ms", wait)
	}
	mp3Clip := `{"type":"input_audio","input_audio":{"data":"` + base64.StdEncoding.EncodeToString(mp3.Silence(2*22050, 22050, 1)) + `","format":"mp3"}}`
	if wait := firstToken(`[{"type":"text","text":"describe"},` + mp3Clip + `]`); wait < 80*time.Millisecond {
		t.Errorf("first token %v after a request of 2 s of mp3 audio, want at least 2 x 40ms", wait)
	}
	if wait := firstToken(`[{"type":"text","text":"describe"}]`); wait >= 60*time.Millisecond {
		t.Errorf("first token %v after a request of text parts only, want no media's prefill", wait)
	}
}

// TestMP3Seconds: an MP3 clip's duration is its samples, its Info tag's
// trim applied; what is not an MP3 stream counts 0.
func TestMP3Seconds(t *testing.T) {
	for _, tc := range []struct {
		data string
		want float64
	}{
		{base64.StdEncoding.EncodeToString(mp3.Silence(12345, 44100, 2)), 12345.0 / 44100},
		{base64.StdEncoding.EncodeToString(mp3.Silence(800, 8000, 1)), 0.1},
		{base64.StdEncoding.EncodeToString(mp3.Silence(800, 8000, 1)[:300]), 0},
		{"bm90IGEgd2F2", 0},
		{"", 0},
	} {
		if got := mp3Seconds(tc.data); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("mp3Seconds(%.16s…) = %v, want %v", tc.data, got, tc.want)
		}
	}
}

func TestWAVSeconds(t *testing.T) {
	wav := make([]byte, 44+32000)
	copy(wav, "RIFF")
	copy(wav[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(wav[28:], 16000) // byte rate: 8 kHz 16-bit mono
	for _, tc := range []struct {
		data string
		want float64
	}{
		{base64.StdEncoding.EncodeToString(wav), 2},
		{base64.StdEncoding.EncodeToString(wav[:44+16001]), 16001.0 / 16000},
		{"bm90IGEgd2F2", 0},
		{"", 0},
	} {
		if got := wavSeconds(tc.data); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("wavSeconds(%.16s…) = %v, want %v", tc.data, got, tc.want)
		}
	}
}
