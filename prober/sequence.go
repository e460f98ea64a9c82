package prober

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"sync"
	"time"

	"github.com/inferprobe/inferprobe/prober/dataset"
)

// Digest identifies the requests a probe has sent, in order: equal seeds and
// settings give equal digests over the same number of requests, so two runs
// can be shown to have sent the same sequence.
type Digest struct {
	Requests uint64
	Sum      [sha256.Size]byte
}

// String is the sum in hex.
func (d Digest) String() string { return fmt.Sprintf("%x", d.Sum) }

// sequence folds each request sent into a running SHA-256: its sequence
// number, scheduled offset from the start in ns, input and output tokens, and
// an FNV-1a hash of the prompt text. Closed-loop requests fold offset 0: their send times follow
// the server's responses, so they are not part of what a seed reproduces.
type sequence struct {
	mu sync.Mutex
	h  hash.Hash
	n  uint64
}

func newSequence() *sequence { return &sequence{h: sha256.New()} }

func (s *sequence) add(seq uint64, offset time.Duration, p dataset.Prompt) {
	var b [40]byte
	binary.LittleEndian.PutUint64(b[0:], seq)
	binary.LittleEndian.PutUint64(b[8:], uint64(offset))
	binary.LittleEndian.PutUint64(b[16:], uint64(p.InputTokens))
	binary.LittleEndian.PutUint64(b[24:], uint64(p.OutputTokens))
	binary.LittleEndian.PutUint64(b[32:], fnv1a(p.Text))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.h.Write(b[:])
	s.n++
}

// fnv1a is 64-bit FNV-1a, written out so hashing a prompt does not copy it.
func fnv1a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := range len(s) {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func (s *sequence) digest() Digest {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := Digest{Requests: s.n}
	s.h.Sum(d.Sum[:0])
	return d
}
