package seeded

import "testing"

func TestStreams(t *testing.T) {
	draw := func(seed uint64, name string) [4]uint64 {
		r := New(seed, name)
		return [4]uint64{r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64()}
	}
	first, second := draw(42, "probe/a/arrival"), draw(42, "probe/a/arrival")
	if first != second {
		t.Fatal("same seed and component gave different draws")
	}
	if draw(42, "probe/a/arrival") == draw(42, "probe/b/arrival") {
		t.Fatal("different components share a stream")
	}
	if draw(42, "probe/a/arrival") == draw(43, "probe/a/arrival") {
		t.Fatal("different seeds share a stream")
	}
}
