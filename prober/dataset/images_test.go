package dataset

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"

	"github.com/inferprobe/inferprobe/scenarios"
)

// sourceColors are the solid colours of sourceDir's readable files, in
// name order.
var sourceColors = []color.NRGBA{{200, 30, 30, 255}, {30, 200, 30, 255}, {30, 30, 200, 255}, {200, 200, 30, 255}, {30, 200, 200, 255}, {200, 40, 160, 255}}

// webpSample is a 4×4 lossless WebP of colour {200, 40, 160}, written by
// Pillow: Go has no WebP encoder.
const webpSample = "UklGRh4AAABXRUJQVlA4TBEAAAAvA8AAAAdQlCIXtP+BiOh/AAA="

// sourceDir writes a directory of solid-colour images, one per format
// bench decodes, with an unreadable .png among them and files that are not
// images, which are left out.
func sourceDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	solid := func(c color.NRGBA) image.Image {
		img := image.NewNRGBA(image.Rect(0, 0, 40, 30))
		for i := 0; i < len(img.Pix); i += 4 {
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
		}
		return img
	}
	write := func(name string, encode func(*bytes.Buffer) error) {
		var buf bytes.Buffer
		if err := encode(&buf); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.png", func(b *bytes.Buffer) error { return png.Encode(b, solid(sourceColors[0])) })
	write("b.PNG", func(b *bytes.Buffer) error { b.WriteString("not an image"); return nil })
	write("c.jpg", func(b *bytes.Buffer) error { return jpeg.Encode(b, solid(sourceColors[1]), &jpeg.Options{Quality: 95}) })
	write("d.gif", func(b *bytes.Buffer) error { return gif.Encode(b, solid(sourceColors[2]), nil) })
	write("e.bmp", func(b *bytes.Buffer) error { return bmp.Encode(b, solid(sourceColors[3])) })
	write("f.tiff", func(b *bytes.Buffer) error { return tiff.Encode(b, solid(sourceColors[4]), nil) })
	write("g.webp", func(b *bytes.Buffer) error {
		raw, err := base64.StdEncoding.DecodeString(webpSample)
		b.Write(raw)
		return err
	})
	write("notes.txt", func(b *bytes.Buffer) error { b.WriteString("a.png is red"); return nil })
	write(".hidden.png", func(b *bytes.Buffer) error { return png.Encode(b, solid(color.NRGBA{A: 255})) })
	return dir
}

// sourceImagesConfig sends one 32×24 PNG per request from dir.
func sourceImagesConfig(dir, sampling string) scenarios.Synthetic {
	return scenarios.Synthetic{Images: &scenarios.Images{BatchSize: 1, Format: scenarios.ImagePNG,
		Width: scenarios.Lengths{Mean: 32}, Height: scenarios.Lengths{Mean: 24}, Source: dir, Sampling: sampling}}
}

// sentColors draws n requests and returns which of sourceColors each
// image is, checking that it is a solid image of the drawn 32×24.
func sentColors(t *testing.T, s scenarios.Synthetic, seed uint64, n int) []int {
	t.Helper()
	src := newWorkloadSource(t, s, nil, seed)
	var got []int
	for i := range n {
		it, err := src.Next()
		if err != nil {
			t.Fatal(err)
		}
		url := it.Prompt.Media.Images[0]
		raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(url, "data:image/png;base64,"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if size := img.Bounds().Size(); size != image.Pt(32, 24) {
			t.Fatalf("request %d: image %v, want the drawn 32×24", i, size)
		}
		c := color.NRGBAModel.Convert(img.At(16, 12)).(color.NRGBA)
		k := slices.IndexFunc(sourceColors, func(s color.NRGBA) bool {
			near := func(a, b uint8) bool { return max(a, b)-min(a, b) <= 8 }
			return near(s.R, c.R) && near(s.G, c.G) && near(s.B, c.B)
		})
		if k < 0 {
			t.Fatalf("request %d: colour %v is none of the source images'", i, c)
		}
		got = append(got, k)
	}
	return got
}

// TestSourceImageSampling: each strategy picks the readable files as
// AIPerf's does, skipping the unreadable one, and each image is its file
// resized to the drawn size.
func TestSourceImageSampling(t *testing.T) {
	dir := sourceDir(t)
	n := len(sourceColors)
	seq := sentColors(t, sourceImagesConfig(dir, scenarios.SamplingSequential), 1, 2*n+1)
	want := []int{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 0}
	if !slices.Equal(seq, want) {
		t.Errorf("sequential-cycle sent %v, want %v (name order, the unreadable b.PNG skipped)", seq, want)
	}
	shuffled := sentColors(t, sourceImagesConfig(dir, scenarios.SamplingShuffle), 1, 3*n)
	for pass := range 3 {
		p := slices.Sorted(slices.Values(shuffled[pass*n : (pass+1)*n]))
		if !slices.Equal(p, want[:n]) {
			t.Errorf("shuffle-cycle pass %d sent %v, want each file once", pass, shuffled[pass*n:(pass+1)*n])
		}
	}
	if slices.Equal(shuffled[:n], want[:n]) && slices.Equal(shuffled[n:2*n], want[:n]) {
		t.Errorf("shuffle-cycle sent %v: not shuffled", shuffled)
	}
	random := sentColors(t, sourceImagesConfig(dir, scenarios.SamplingRandom), 1, 40)
	if again := sentColors(t, sourceImagesConfig(dir, scenarios.SamplingRandom), 1, 40); !slices.Equal(random, again) {
		t.Errorf("the same seed picked %v, then %v", random, again)
	}
	if other := sentColors(t, sourceImagesConfig(dir, scenarios.SamplingRandom), 2, 40); slices.Equal(random, other) {
		t.Errorf("seeds 1 and 2 picked the same %v", random)
	}
	if seen := slices.Compact(slices.Sorted(slices.Values(random))); !slices.Equal(seen, want[:n]) {
		t.Errorf("40 random picks of %d files saw %v", n, seen)
	}
}

// TestSourceImageErrors: a directory without a readable image is an
// error naming it, when the source is built, before anything is sent.
func TestSourceImageErrors(t *testing.T) {
	broken := t.TempDir()
	for _, name := range []string{"x.png", "y.jpg"} {
		if err := os.WriteFile(filepath.Join(broken, name), []byte("junk"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	empty := t.TempDir()
	for _, tc := range []struct{ dir, want string }{
		{broken, "no file of " + broken + " is a readable image (x.png: image: unknown format; y.jpg: image: unknown format)"},
		{empty, empty + " holds no image file"},
		{filepath.Join(empty, "missing"), "cannot read directory " + filepath.Join(empty, "missing")},
	} {
		_, err := New(scenarios.Dataset{Synthetic: new(sourceImagesConfig(tc.dir, scenarios.SamplingRandom))}, Options{Seed: 1, Component: "probe/p"})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.dir, err, tc.want)
		}
	}
}
