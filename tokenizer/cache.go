package tokenizer

import (
	"strings"
	"sync"
)

const (
	defaultCacheEntries = 1 << 16
	maxCachedWordBytes  = 256
)

// wordCache is a size-capped, two-generation cache: when the current
// generation fills it becomes the previous one (the older one is dropped),
// and hits in the previous generation are promoted. Memory is bounded by
// 2*limit entries of at most maxCachedWordBytes each.
type wordCache struct {
	mu        sync.RWMutex
	limit     int
	cur, prev map[string][]int
}

func (c *wordCache) init(limit int) {
	c.limit = limit
	c.cur = make(map[string][]int)
}

func (c *wordCache) get(w string) ([]int, bool) {
	c.mu.RLock()
	ids, ok := c.cur[w]
	c.mu.RUnlock()
	if ok {
		return ids, true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ids, ok := c.cur[w]; ok {
		return ids, true
	}
	if ids, ok := c.prev[w]; ok {
		c.putLocked(strings.Clone(w), ids)
		return ids, true
	}
	return nil, false
}

func (c *wordCache) put(w string, ids []int) {
	c.mu.Lock()
	c.putLocked(w, ids)
	c.mu.Unlock()
}

func (c *wordCache) putLocked(w string, ids []int) {
	if len(c.cur) >= c.limit {
		c.prev, c.cur = c.cur, make(map[string][]int, c.limit/4)
	}
	c.cur[w] = ids
}
