package record

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"slices"
	"sync"
	"time"
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

// Digester folds each request sent into a running SHA-256, its DigestEntry
// (see there). Closed-loop requests fold offset 0: their send times follow
// the server's responses, so they are not part of what a seed reproduces.
type Digester struct {
	mu sync.Mutex
	h  hash.Hash
	n  uint64
}

// NewDigester is a Digester of no requests.
func NewDigester() *Digester { return &Digester{h: sha256.New()} }

// DigestEntry is what one request folds into its probe's Digest: its
// sequence number, scheduled offset from the start in ns, input and output
// tokens and the FNV-1a hash of its prompt. Every record carries its own
// (Record.Digest), so that the shards of a run, which fold only their own
// requests, can be folded into the digest of the unsharded run (FoldDigest).
// The zero entry is a request that was never folded: a real one holds a
// prompt hash, which is never zero for the empty prompt either.
type DigestEntry [40]byte

// NewDigestEntry is the entry of request seq, scheduled at offset, whose
// prompt is text of inputTokens that asks for outputTokens.
func NewDigestEntry(seq uint64, offset time.Duration, inputTokens, outputTokens int, text string) DigestEntry {
	var e DigestEntry
	binary.LittleEndian.PutUint64(e[0:], seq)
	binary.LittleEndian.PutUint64(e[8:], uint64(offset))
	binary.LittleEndian.PutUint64(e[16:], uint64(inputTokens))
	binary.LittleEndian.PutUint64(e[24:], uint64(outputTokens))
	binary.LittleEndian.PutUint64(e[32:], fnv1a(text))
	return e
}

// Seq is the sequence number of the entry's request.
func (e DigestEntry) Seq() uint64 { return binary.LittleEndian.Uint64(e[0:]) }

// Folded reports whether the entry is a request's, not the zero entry.
func (e DigestEntry) Folded() bool { return e != DigestEntry{} }

// Add folds e.
func (s *Digester) Add(e DigestEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.h.Write(e[:])
	s.n++
}

// FoldDigest is the digest of the requests whose entries are given, in any
// order and from any number of shards: a probe folds its requests in
// sequence order (its schedulers send in the order they plan, and a
// session folds all its turns, consecutive numbers, when its first is
// sent), so folding every shard's entries sorted by sequence number gives
// the digest of the same run unsharded. Zero entries are skipped; two
// entries of one sequence number are an error (a shard given twice).
func FoldDigest(entries []DigestEntry) (Digest, error) {
	sorted := slices.DeleteFunc(slices.Clone(entries), func(e DigestEntry) bool { return !e.Folded() })
	slices.SortFunc(sorted, func(a, b DigestEntry) int { return cmp.Compare(a.Seq(), b.Seq()) })
	s := NewDigester()
	for i, e := range sorted {
		if i > 0 && sorted[i-1].Seq() == e.Seq() {
			return Digest{}, fmt.Errorf("request %d is there twice: were the records of one shard given twice?", e.Seq())
		}
		s.Add(e)
	}
	return s.Digest(), nil
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

// Digest is the digest of the entries folded so far.
func (s *Digester) Digest() Digest {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := Digest{Requests: s.n}
	s.h.Sum(d.Sum[:0])
	return d
}
