package prober

import (
	"testing"

	"github.com/inferprobe/inferprobe/prober/dataset"
)

// TestDigestFoldsMedia: a request's images and audio are part of what the
// run's digest identifies: the same text with other media is another entry.
func TestDigestFoldsMedia(t *testing.T) {
	p := dataset.Prompt{Text: "describe", InputTokens: 1, OutputTokens: 8}
	a, b := p, p
	a.Media, b.Media = &dataset.Media{Key: "1"}, &dataset.Media{Key: "2"}
	plain, withA, withB := newDigestEntry(1, 0, p), newDigestEntry(1, 0, a), newDigestEntry(1, 0, b)
	if plain == withA || withA == withB {
		t.Errorf("entries without media, with set 1 and with set 2: %x, %x, %x; want three apart", plain, withA, withB)
	}
	if again := newDigestEntry(1, 0, a); again != withA {
		t.Error("the same media gave another entry")
	}
}
