package record

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is one replica's share of every probe's request sequence: replica
// Index of Count sends exactly the requests whose index in the sequence is
// Index modulo Count, at their unsharded offsets from its own start, so Count
// replicas together send what one would and Prometheus sums their histograms.
// A multi-turn session counts as one request of the sequence, so that
// sessions of k turns are spread over the shards even where k and Count
// share a factor. Without sessions a request's index is its sequence number.
// Every replica still draws the whole seeded sequence, which is what keeps the
// shares disjoint and complete without any coordination; replicas are not
// phase-locked, so one started later sends its share shifted by the difference.
//
// The zero Shard is the whole sequence. In a Kubernetes StatefulSet of n
// replicas, pod ordinal i (the number at the end of the pod name) is shard i/n.
//
// Closed-loop concurrency and max_concurrency are split the same way: replica i
// keeps ⌊c/n⌋ of c, plus one if i < c mod n. A split cap only approximates one
// shared cap, since a replica cannot lend an idle slot to another.
type Shard struct {
	Index, Count int
}

// ParseShard parses "i/n", as given to --shard.
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want i/n, e.g. 0/3 for the first of three replicas", s)
	}
	i, err := strconv.Atoi(is)
	if err != nil {
		return Shard{}, fmt.Errorf("shard %q: index %q is not a whole number; want i/n, e.g. 0/3", s, is)
	}
	n, err := strconv.Atoi(ns)
	if err != nil {
		return Shard{}, fmt.Errorf("shard %q: count %q is not a whole number; want i/n, e.g. 0/3", s, ns)
	}
	sh := Shard{Index: i, Count: n}
	err = sh.Check()
	if n < 1 {
		// Even 0/0, which check takes for the zero Shard: it was written, not left out.
		err = sh.countError()
	}
	if err != nil {
		return Shard{}, err
	}
	return sh, nil
}

func (s Shard) countError() error {
	return fmt.Errorf("shard %d/%d: the count must be >= 1 (the number of replicas)", s.Index, s.Count)
}

// Check reports a shard that is not one of its count, unless it is the
// zero Shard.
func (s Shard) Check() error {
	switch {
	case s == Shard{}:
	case s.Count < 1:
		return s.countError()
	case s.Index < 0 || s.Index >= s.Count:
		return fmt.Errorf("shard %d/%d: the index must be 0 to %d (replicas are numbered from 0)", s.Index, s.Count, s.Count-1)
	}
	return nil
}

func (s Shard) String() string {
	if s.Count <= 1 {
		return "0/1"
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Owns reports whether the item-th request or session of the sequence is
// this shard's to send.
func (s Shard) Owns(item uint64) bool {
	return s.Count <= 1 || item%uint64(s.Count) == uint64(s.Index)
}

// Share is this shard's part of c, such that the parts of all shards sum to c.
func (s Shard) Share(c int) int {
	if s.Count <= 1 {
		return c
	}
	n := c / s.Count
	if s.Index < c%s.Count {
		n++
	}
	return n
}
