package dataset

import (
	"bytes"
	"fmt"
	"image"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	// The decoders of scenarios.ImageExtensions: the standard library has
	// PNG, JPEG and GIF; golang.org/x/image adds BMP, TIFF and WebP, which
	// Pillow (AIPerf's reader) opens too.
	_ "image/gif"
	_ "image/jpeg"
	_ "image/png"

	_ "golang.org/x/image/bmp"
	xdraw "golang.org/x/image/draw"
	_ "golang.org/x/image/tiff"
	_ "golang.org/x/image/webp"

	"github.com/inferprobe/inferprobe/prober/seeded"
	"github.com/inferprobe/inferprobe/scenarios"
)

// sourceImages picks the files of a source directory as AIPerf 0.13's
// ImageGenerator does, by its sampling strategy, and retires a file it
// cannot decode. The pool's sets are drawn in order before the run, so the
// picks are a function of the seed alone.
type sourceImages struct {
	dir      string
	sampling string
	paths    []string
	retired  []bool
	// avail are the indexes of the files not retired, in name order.
	avail []int
	// cycle is the rest of shuffle-cycle's pass, taken from its end.
	cycle []int
	// next is sequential-cycle's next index.
	next int
	rng  *rand.Rand
	// unreadable says why each retired file was.
	unreadable []string
}

func newSourceImages(cfg scenarios.Images, seed uint64) (*sourceImages, error) {
	paths, err := scenarios.SourceImages(cfg.Source)
	if err != nil {
		return nil, fmt.Errorf("images source: %w", err)
	}
	s := &sourceImages{dir: cfg.Source, sampling: cfg.Sampling, paths: paths, retired: make([]bool, len(paths)),
		rng: seeded.New(seed, sharedStreams+"/images/source")}
	for i := range paths {
		s.avail = append(s.avail, i)
	}
	return s, nil
}

// image is the next file's image resized to w×h (Catmull-Rom, the cubic
// filter of Pillow's default resize), in non-premultiplied colour.
func (s *sourceImages) image(w, h int) (*image.NRGBA, error) {
	for len(s.avail) > 0 {
		i := s.pick()
		src, err := decodeImage(s.paths[i])
		if err != nil {
			s.retire(i, err)
			continue
		}
		dst := image.NewNRGBA(image.Rect(0, 0, w, h))
		xdraw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), xdraw.Src, nil)
		return dst, nil
	}
	return nil, fmt.Errorf("images source: no file of %s is a readable image (%s); put PNG, JPEG, GIF, BMP, TIFF or WebP files there",
		s.dir, strings.Join(s.unreadable, "; "))
}

// pick is the index of the next file by the sampling strategy.
func (s *sourceImages) pick() int {
	switch s.sampling {
	case scenarios.SamplingShuffle:
		if len(s.cycle) == 0 {
			s.cycle = slices.Clone(s.avail)
			s.rng.Shuffle(len(s.cycle), func(i, j int) { s.cycle[i], s.cycle[j] = s.cycle[j], s.cycle[i] })
		}
		i := s.cycle[len(s.cycle)-1]
		s.cycle = s.cycle[:len(s.cycle)-1]
		return i
	case scenarios.SamplingSequential:
		for {
			i := s.next
			s.next = (s.next + 1) % len(s.paths)
			if !s.retired[i] {
				return i
			}
		}
	}
	return s.avail[s.rng.IntN(len(s.avail))]
}

func (s *sourceImages) retire(i int, err error) {
	s.retired[i] = true
	skip := func(j int) bool { return j == i }
	s.avail = slices.DeleteFunc(s.avail, skip)
	s.cycle = slices.DeleteFunc(s.cycle, skip)
	s.unreadable = append(s.unreadable, fmt.Sprintf("%s: %v", filepath.Base(s.paths[i]), err))
}

func decodeImage(path string) (image.Image, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	img, _, err := image.Decode(bytes.NewReader(b))
	return img, err
}
