package dataset

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image" // its decoders are registered in images.go
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/inferprobe/inferprobe/scenarios"
)

// mediaField is the images and audio of an AIPerf single_turn, multi_turn
// turn or random_pool entry, as written: "image" or "images", "audio" or
// "audios", each a string or (the lists) {"contents": [strings]} objects.
// Video and vLLM's image cache ids are read to be refused.
type mediaField struct {
	Image      *string           `json:"image"`
	Images     []json.RawMessage `json:"images"`
	Audio      *string           `json:"audio"`
	Audios     []json.RawMessage `json:"audios"`
	Video      json.RawMessage   `json:"video"`
	Videos     json.RawMessage   `json:"videos"`
	ImageUUIDs json.RawMessage   `json:"image_uuids"`
}

// mediaWithoutText refuses an entry of images or audio alone, which AIPerf
// sends with no text part.
const mediaWithoutText = "has images or audio but no text; bench sends them after an entry's text: add a \"text\""

// rawMedia is an entry's images and audio as written, resolved into a
// *Media when sent (fileSource.media).
type rawMedia struct{ images, audio []string }

func (m rawMedia) empty() bool { return len(m.images) == 0 && len(m.audio) == 0 }

// size is the bytes m holds, for a random_pool's memory bound.
func (m rawMedia) size() int {
	n := 0
	for _, s := range append(m.images, m.audio...) {
		n += len(s)
	}
	return n
}

// values is the entry's images and audio, in AIPerf's rules: the singular
// field wins where both are given (AIPerf refuses both non-empty), and
// lists take strings or objects whose contents are strings.
func (f mediaField) values() (rawMedia, error) {
	for _, v := range []json.RawMessage{f.Video, f.Videos} {
		if len(v) > 0 && !isEmptyJSON(v) {
			return rawMedia{}, errors.New("carries video, which bench does not send; drop video and videos from the file")
		}
	}
	if len(f.ImageUUIDs) > 0 && !isEmptyJSON(f.ImageUUIDs) {
		return rawMedia{}, errors.New("has image_uuids, vLLM's image cache ids, which bench does not send; drop them")
	}
	var m rawMedia
	var err error
	if m.images, err = oneOrList("image", f.Image, f.Images); err != nil {
		return rawMedia{}, err
	}
	if m.audio, err = oneOrList("audio", f.Audio, f.Audios); err != nil {
		return rawMedia{}, err
	}
	return m, nil
}

// isEmptyJSON reports whether v is null, "" or [].
func isEmptyJSON(v json.RawMessage) bool {
	s := string(bytes.TrimSpace(v))
	return s == "null" || s == `""` || s == "[]"
}

// oneOrList is field's values: the singular one, or the list's.
func oneOrList(field string, one *string, list []json.RawMessage) ([]string, error) {
	if one != nil {
		if len(list) > 0 && *one != "" {
			return nil, fmt.Errorf("sets both %s and %ss; keep one", field, field)
		}
		return []string{*one}, nil
	}
	var out []string
	for _, raw := range list {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			out = append(out, s)
			continue
		}
		var obj struct {
			Contents []string        `json:"contents"`
			UUIDs    json.RawMessage `json:"uuids"`
		}
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, fmt.Errorf("%ss holds %.80s; want strings or {\"contents\": [strings]}", field, raw)
		}
		if len(obj.UUIDs) > 0 && !isEmptyJSON(obj.UUIDs) {
			return nil, fmt.Errorf("%ss has uuids, vLLM's image cache ids, which bench does not send; drop them", field)
		}
		out = append(out, obj.Contents...)
	}
	return out, nil
}

// mediaFiles resolves entries' images and audio as AIPerf 0.13's loaders
// do (MediaConversionMixin): a data URL (image) or "wav,BASE64"/
// "mp3,BASE64" (audio) is sent as it is, an image URL is passed on for the
// server to fetch, and anything else is a file, read once and kept, so a
// run reads each file before it starts (the check pass), not while it runs.
type mediaFiles struct {
	images map[string]string // path → data URL
	audio  map[string]Clip   // path → clip
	// sets are the sets written as short values (paths, URLs), by them:
	// shared by the entries that give them, so that a file's content parts
	// are encoded once (Media.Encoded), not for every request.
	sets map[string]*Media
}

// maxSetKey bounds the values a set is kept by: longer ones are inline
// data, which each entry carries (and is decoded from) anyway.
const maxSetKey = 4 << 10

// resolve is m as sent; nil for none.
func (c *mediaFiles) resolve(m rawMedia) (*Media, error) {
	if m.empty() {
		return nil, nil
	}
	key := ""
	if m.size() <= maxSetKey {
		key = strings.Join(m.images, "\x00") + "\x01" + strings.Join(m.audio, "\x00")
		if set, ok := c.sets[key]; ok {
			return set, nil
		}
	}
	out := &Media{}
	for _, v := range m.images {
		u, err := c.image(v)
		if err != nil {
			return nil, err
		}
		out.Images = append(out.Images, u)
	}
	for _, v := range m.audio {
		clip, err := c.clip(v)
		if err != nil {
			return nil, err
		}
		out.Audio = append(out.Audio, clip)
	}
	out.setKey()
	if key != "" {
		if c.sets == nil {
			c.sets = map[string]*Media{}
		}
		c.sets[key] = out
	}
	return out, nil
}

// isURL is AIPerf's test: a "://" with a scheme and a host on each side;
// one without the other is an error.
func isURL(v string) (bool, error) {
	if !strings.Contains(v, "://") {
		return false, nil
	}
	u, err := url.Parse(v)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return false, fmt.Errorf("%.80q is not a URL: it needs a scheme and a host, as https://host/cat.png", v)
	}
	return true, nil
}

func (c *mediaFiles) image(v string) (string, error) {
	if len(v) >= 5 && strings.EqualFold(v[:5], "data:") {
		return v, nil
	}
	if ok, err := isURL(v); ok || err != nil {
		return v, err
	}
	if u, ok := c.images[v]; ok {
		return u, nil
	}
	b, err := readMediaFile("image", v)
	if err != nil {
		return "", err
	}
	// AIPerf opens the file with Pillow and sends PNG and JPEG only,
	// re-encoded; bench sends the file's bytes as they are.
	_, format, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return "", fmt.Errorf("image %s is not an image bench can read (%v); give a PNG or JPEG file", v, err)
	}
	if format != scenarios.ImagePNG && format != scenarios.ImageJPEG {
		return "", fmt.Errorf("image %s is %s; AIPerf sends PNG and JPEG files only: convert it", v, strings.ToUpper(format))
	}
	u := "data:image/" + format + ";base64," + base64.StdEncoding.EncodeToString(b)
	if c.images == nil {
		c.images = map[string]string{}
	}
	c.images[v] = u
	return u, nil
}

// audioFormats are the formats AIPerf sends, as a "FORMAT,BASE64" prefix
// or a file's extension.
var audioFormats = []string{scenarios.AudioWAV, scenarios.AudioMP3}

func (c *mediaFiles) clip(v string) (Clip, error) {
	if format, data, ok := strings.Cut(v, ","); ok && !strings.Contains(format, ":") {
		for _, f := range audioFormats {
			if strings.EqualFold(format, f) {
				return Clip{Data: data, Format: format}, nil
			}
		}
	}
	if ok, err := isURL(v); ok || err != nil || strings.HasPrefix(v, "data:") {
		// AIPerf takes a URL or data URL for a file and fails on it.
		return Clip{}, fmt.Errorf("audio %.80q: AIPerf's audio is \"wav,BASE64\", \"mp3,BASE64\" or a .wav or .mp3 file; download it, or give its base64 so", v)
	}
	if clip, ok := c.audio[v]; ok {
		return clip, nil
	}
	b, err := readMediaFile("audio", v)
	if err != nil {
		return Clip{}, err
	}
	format := strings.ToLower(strings.TrimPrefix(filepath.Ext(v), "."))
	if !slices.Contains(audioFormats, format) {
		return Clip{}, fmt.Errorf("audio %s is not a .wav or .mp3 file, the formats AIPerf sends: convert it", v)
	}
	clip := Clip{Data: base64.StdEncoding.EncodeToString(b), Format: format}
	if c.audio == nil {
		c.audio = map[string]Clip{}
	}
	c.audio[v] = clip
	return clip, nil
}

// readMediaFile reads a file an entry names, relative to the working
// directory as AIPerf reads it.
func readMediaFile(what, path string) ([]byte, error) {
	if path == "" {
		return nil, fmt.Errorf("an empty %s; give a file path, a URL or base64 data", what)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s %.120s: %v; give a file path (from the working directory), %s", what, path, errors.Unwrap(err), mediaForms[what])
	}
	return b, nil
}

// mediaForms is what else an entry may give, by kind.
var mediaForms = map[string]string{
	"image": "an http(s) URL or a data URL (data:image/png;base64,…)",
	"audio": `or "wav,BASE64" / "mp3,BASE64"`,
}
