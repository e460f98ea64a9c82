package dataset

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/inferprobe/inferprobe/scenarios"
)

// mediaDir writes a PNG, a JPEG, a GIF, a WAV and a FLAC file (the last
// two need only their names) and returns their paths and contents.
func mediaDir(t *testing.T) (dir string, files map[string][]byte) {
	t.Helper()
	dir = t.TempDir()
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	var p, j, g bytes.Buffer
	if err := png.Encode(&p, img); err != nil {
		t.Fatal(err)
	}
	if err := jpeg.Encode(&j, img, nil); err != nil {
		t.Fatal(err)
	}
	if err := gif.Encode(&g, img, nil); err != nil {
		t.Fatal(err)
	}
	files = map[string][]byte{"a.png": p.Bytes(), "b.jpg": j.Bytes(), "c.gif": g.Bytes(), "d.wav": []byte("RIFF....WAVE"), "e.flac": []byte("fLaC")}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, files
}

// TestFileMedia checks each form AIPerf 0.13's custom datasets give an
// image or audio clip in, as its MediaConversionMixin reads them: files
// are sent base64 in a data URL (images) or as a clip of their extension's
// format (audio), URLs and data URLs passed on, "wav,BASE64" sent as it is.
func TestFileMedia(t *testing.T) {
	dir, files := mediaDir(t)
	b64 := func(name string) string { return base64.StdEncoding.EncodeToString(files[name]) }
	path := func(name string) string { return filepath.Join(dir, name) }
	for _, tc := range []struct {
		name, line string
		images     []string
		audio      []Clip
	}{
		{"png file", `{"text": "q", "image": "` + path("a.png") + `"}`, []string{"data:image/png;base64," + b64("a.png")}, nil},
		{"jpeg file", `{"text": "q", "image": "` + path("b.jpg") + `"}`, []string{"data:image/jpeg;base64," + b64("b.jpg")}, nil},
		{"URL passed on", `{"text": "q", "image": "https://example.com/cat.png"}`, []string{"https://example.com/cat.png"}, nil},
		{"data URL passed on", `{"text": "q", "image": "data:image/png;base64,AAAA"}`, []string{"data:image/png;base64,AAAA"}, nil},
		{"images as strings and objects", `{"text": "q", "images": ["https://h/1.png", {"name": "x", "contents": ["https://h/2.png", "` + path("a.png") + `"]}]}`,
			[]string{"https://h/1.png", "https://h/2.png", "data:image/png;base64," + b64("a.png")}, nil},
		{"audio base64", `{"text": "q", "audio": "wav,UklGRg=="}`, nil, []Clip{{Data: "UklGRg==", Format: "wav"}}},
		{"audio format as written", `{"text": "q", "audio": "MP3,//s="}`, nil, []Clip{{Data: "//s=", Format: "MP3"}}},
		{"audio file", `{"text": "q", "audio": "` + path("d.wav") + `"}`, nil, []Clip{{Data: b64("d.wav"), Format: "wav"}}},
		{"audios and images", `{"text": "q", "images": ["https://h/1.png"], "audios": ["mp3,AAAA", {"contents": ["wav,BBBB"]}]}`,
			[]string{"https://h/1.png"}, []Clip{{Data: "AAAA", Format: "mp3"}, {Data: "BBBB", Format: "wav"}}},
		{"video null", `{"text": "q", "image": "https://h/1.png", "video": null, "videos": []}`, []string{"https://h/1.png"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, format := range []string{FormatSingleTurn, FormatRandomPool} {
				s, err := load(format, "arrival", 1, []byte(tc.line), nil)
				if err != nil {
					t.Fatal(err)
				}
				it, err := s.Next()
				if err != nil {
					t.Fatal(err)
				}
				m := it.Prompt.Media
				if m == nil || !slices.Equal(m.Images, tc.images) || !slices.Equal(m.Audio, tc.audio) {
					t.Fatalf("%s: media = %+v, want images %q audio %+v", format, m, tc.images, tc.audio)
				}
				if m.Key == "" || m.AudioSeconds() != 0 {
					t.Errorf("%s: key %q, audio seconds %g; want a key and 0 s (AIPerf reports no duration for a file's audio)", format, m.Key, m.AudioSeconds())
				}
			}
		})
	}
	s, err := load(FormatSingleTurn, "arrival", 1, []byte(`{"text": "q"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if it, _ := s.Next(); it.Prompt.Media != nil {
		t.Errorf("an entry without media carries %+v", it.Prompt.Media)
	}
}

// TestFileMediaReadOnce checks that a file is read in the check pass and
// not again while the run sends it: a file removed after the start is
// still sent, as the same set.
func TestFileMediaReadOnce(t *testing.T) {
	dir, files := mediaDir(t)
	p := filepath.Join(dir, "a.png")
	s, err := load(FormatSingleTurn, "arrival", 1, []byte(`{"text": "q", "image": "`+p+`"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	var sets []*Media
	for range 2 {
		it, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(files["a.png"]); it.Prompt.Media.Images[0] != want {
			t.Fatalf("image %.40q, want the file's", it.Prompt.Media.Images[0])
		}
		sets = append(sets, it.Prompt.Media)
	}
	// One set, so that its content parts are encoded once.
	if sets[0] != sets[1] {
		t.Error("each pass resolved the entry's media again")
	}
}

// TestMultiTurnMedia checks that each user turn's media go with its
// message, in the later turns' history too, as AIPerf's history sends them.
func TestMultiTurnMedia(t *testing.T) {
	s, err := load(FormatMultiTurn, "arrival", 1, []byte(`{"session_id": "c", "turns": [{"text": "one", "image": "https://h/1.png"}, {"text": "two", "audio": "wav,AAAA"}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	it, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	if m := it.Prompt.Media; m == nil || !slices.Equal(m.Images, []string{"https://h/1.png"}) {
		t.Errorf("first turn's media = %+v", m)
	}
	second := it.Turns[0].Prompt
	if m := second.Media; m == nil || len(m.Images) != 0 || len(m.Audio) != 1 {
		t.Errorf("second turn's media = %+v, want its clip alone", m)
	}
	if h := second.Messages; len(h) != 3 || h[0].Media == nil || h[0].Media.Images[0] != "https://h/1.png" || h[2].Media != second.Media {
		t.Errorf("second turn's history = %+v; want the first turn's image with its message", h)
	}
}

// TestFileMediaRefused checks what bench cannot send, or AIPerf would not,
// is refused before the run, each with what to do.
func TestFileMediaRefused(t *testing.T) {
	dir, _ := mediaDir(t)
	path := func(name string) string { return filepath.Join(dir, name) }
	missing := path("missing.png")
	for _, tc := range []struct {
		name, format, line, want string
	}{
		{"missing file", FormatSingleTurn, `{"text": "q", "image": "` + missing + `"}`, "f:1: image " + missing + ": no such file or directory; give a file path (from the working directory), an http(s) URL or a data URL (data:image/png;base64,…)"},
		{"missing audio", FormatSingleTurn, `{"text": "q", "audio": "flac,AAAA"}`, `f:1: audio flac,AAAA: no such file or directory; give a file path (from the working directory), or "wav,BASE64" / "mp3,BASE64"`},
		{"empty image", FormatSingleTurn, `{"text": "q", "image": ""}`, "f:1: an empty image; give a file path, a URL or base64 data"},
		{"gif", FormatSingleTurn, `{"text": "q", "image": "` + path("c.gif") + `"}`, "f:1: image " + path("c.gif") + " is GIF; AIPerf sends PNG and JPEG files only: convert it"},
		{"not an image", FormatSingleTurn, `{"text": "q", "image": "` + path("d.wav") + `"}`, "f:1: image " + path("d.wav") + " is not an image bench can read (image: unknown format); give a PNG or JPEG file"},
		{"flac", FormatSingleTurn, `{"text": "q", "audio": "` + path("e.flac") + `"}`, "f:1: audio " + path("e.flac") + " is not a .wav or .mp3 file, the formats AIPerf sends: convert it"},
		{"audio URL", FormatSingleTurn, `{"text": "q", "audio": "https://h/a.wav"}`, `f:1: audio "https://h/a.wav": AIPerf's audio is "wav,BASE64", "mp3,BASE64" or a .wav or .mp3 file; download it, or give its base64 so`},
		{"audio data URL", FormatSingleTurn, `{"text": "q", "audio": "data:audio/wav;base64,AAAA"}`, `f:1: audio "data:audio/wav;base64,AAAA": AIPerf's audio is`},
		{"half a URL", FormatSingleTurn, `{"text": "q", "image": "https:///cat.png"}`, `f:1: "https:///cat.png" is not a URL: it needs a scheme and a host, as https://host/cat.png`},
		{"both forms", FormatSingleTurn, `{"text": "q", "image": "https://h/1.png", "images": ["https://h/2.png"]}`, "f:1: sets both image and images; keep one"},
		{"bad list", FormatSingleTurn, `{"text": "q", "images": [7]}`, `f:1: images holds 7; want strings or {"contents": [strings]}`},
		{"video", FormatSingleTurn, `{"text": "q", "video": "https://h/v.mp4"}`, "f:1: carries video, which bench does not send; drop video and videos from the file"},
		{"videos", FormatRandomPool, `{"text": "q", "videos": ["https://h/v.mp4"]}`, "f:1: carries video"},
		{"image uuids", FormatSingleTurn, `{"text": "q", "images": ["https://h/1.png"], "image_uuids": ["u1"]}`, "f:1: has image_uuids, vLLM's image cache ids, which bench does not send; drop them"},
		{"image object uuids", FormatSingleTurn, `{"text": "q", "images": [{"contents": ["https://h/1.png"], "uuids": ["u1"]}]}`, "f:1: images has uuids"},
		{"turn with a missing file", FormatMultiTurn, `{"turns": [{"text": "a"}, {"text": "b", "image": "` + missing + `"}]}`, "f:1: image " + missing + ": no such file"},
		{"turn with video", FormatMultiTurn, `{"turns": [{"text": "a", "video": "v.mp4"}]}`, "f:1: turn 1 carries video"},
		{"media without text", FormatSingleTurn, `{"image": "https://h/1.png"}`, `f:1: has images or audio but no text; bench sends them after an entry's text: add a "text"`},
		{"turn of media without text", FormatMultiTurn, `{"turns": [{"audio": "wav,AAAA"}]}`, `f:1: turn 1 has images or audio but no text`},
		{"assistant media", FormatMultiTurn, `{"turns": [{"text": "a"}, {"role": "assistant", "text": "b", "image": "https://h/1.png"}]}`, "f:1: turn 2 is the assistant's and carries images or audio; bench sends an assistant turn's text only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(tc.format, "arrival", 1, []byte(tc.line), nil)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}

// TestFileMediaNeedsChat checks that an entry's media are refused for an
// endpoint that sends none, rather than dropped.
func TestFileMediaNeedsChat(t *testing.T) {
	text, _ := NewText(nil)
	cfg := scenarios.File{Path: "f", Format: FormatSingleTurn, Timing: "arrival", Speedup: 1, OutputTokens: scenarios.Lengths{Mean: 64}}
	for _, tc := range []struct {
		endpoint, want string
	}{
		{"completions", "f:1: carries images or audio, which only endpoint chat sends; the target's is completions: drop them or use chat"},
		{"chat", "<nil>"},
		{"", "<nil>"},
	} {
		_, err := newFileSource(cfg, strings.NewReader(`{"text": "q", "image": "https://h/1.png"}`), "f", text, Options{Seed: 1, Component: "p", Endpoint: tc.endpoint})
		if got := fmt.Sprint(err); got != tc.want {
			t.Errorf("endpoint %q: error %q, want %q", tc.endpoint, got, tc.want)
		}
	}
}
