package tokenizer

import (
	"strings"
	"testing"
)

func TestWordCacheBounded(t *testing.T) {
	var c wordCache
	c.init(4)
	for i := 0; i < 100; i++ {
		c.put(strings.Repeat("x", i+2), []int{i})
	}
	if len(c.cur) > 4 || len(c.prev) > 4 {
		t.Fatalf("cache grew past its limit: cur=%d prev=%d", len(c.cur), len(c.prev))
	}
}
