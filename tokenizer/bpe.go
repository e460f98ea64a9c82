package tokenizer

type merge struct {
	rank int32
	id   int32
}

// heapBPEMinBytes is the word length from which bpe switches from the simple
// quadratic scan to the O(n log n) priority-queue merge.
const heapBPEMinBytes = 48

// bpe applies merges by rank (lowest first, leftmost on ties), as Hugging
// Face's BPE model does.
func (t *Tokenizer) bpe(w string) []int {
	if len(w) >= heapBPEMinBytes {
		return t.bpeHeap(w)
	}
	return t.bpeScan(w)
}

// bpeScan is bpe for short words: repeatedly scan for the best pair.
func (t *Tokenizer) bpeScan(w string) []int {
	syms := make([]int, len(w))
	for i := 0; i < len(w); i++ {
		syms[i] = t.byteID[w[i]]
	}
	for len(syms) > 1 {
		bestRank, bestAt := int32(-1), -1
		var bestID int32
		for i := 0; i+1 < len(syms); i++ {
			m, ok := t.merges[uint64(syms[i])<<32|uint64(syms[i+1])]
			if ok && (bestAt < 0 || m.rank < bestRank) {
				bestRank, bestAt, bestID = m.rank, i, m.id
			}
		}
		if bestAt < 0 {
			break
		}
		syms[bestAt] = int(bestID)
		syms = append(syms[:bestAt+1], syms[bestAt+2:]...)
	}
	return syms
}

// candidate is a possible merge of the symbol at pos with its right neighbour.
type candidate struct {
	rank, pos, id int32
}

func (a candidate) less(b candidate) bool {
	return a.rank < b.rank || a.rank == b.rank && a.pos < b.pos
}

type candHeap []candidate

func (h *candHeap) push(c candidate) {
	*h = append(*h, c)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s[i].less(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *candHeap) pop() candidate {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(s) && s[l].less(s[m]) {
			m = l
		}
		if l+1 < len(s) && s[l+1].less(s[m]) {
			m = l + 1
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// bpeHeap is bpe for long words: symbols form a linked list and candidate
// merges sit in a min-heap ordered by (rank, position), with stale entries
// discarded when popped. Same result as the quadratic scan.
func (t *Tokenizer) bpeHeap(w string) []int {
	n := len(w)
	ids := make([]int32, n)
	next := make([]int32, n)
	prev := make([]int32, n)
	alive := make([]bool, n)
	for i := 0; i < n; i++ {
		ids[i] = int32(t.byteID[w[i]])
		next[i], prev[i], alive[i] = int32(i+1), int32(i-1), true
	}
	next[n-1] = -1
	h := make(candHeap, 0, n)
	try := func(pos int32) {
		nx := next[pos]
		if nx < 0 {
			return
		}
		if m, ok := t.merges[uint64(ids[pos])<<32|uint64(ids[nx])]; ok {
			h.push(candidate{rank: m.rank, pos: pos, id: m.id})
		}
	}
	for i := 0; i+1 < n; i++ {
		try(int32(i))
	}
	for len(h) > 0 {
		c := h.pop()
		nx := next[c.pos]
		if !alive[c.pos] || nx < 0 {
			continue
		}
		m, ok := t.merges[uint64(ids[c.pos])<<32|uint64(ids[nx])]
		if !ok || m.rank != c.rank {
			continue // stale: one side changed since this was pushed
		}
		ids[c.pos] = c.id
		alive[nx] = false
		next[c.pos] = next[nx]
		if next[nx] >= 0 {
			prev[next[nx]] = c.pos
		}
		if p := prev[c.pos]; p >= 0 {
			try(p)
		}
		try(c.pos)
	}
	out := make([]int, 0, n/2)
	for i := int32(0); i >= 0; i = next[i] {
		out = append(out, int(ids[i]))
	}
	return out
}
