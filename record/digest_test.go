package record

import "testing"

func TestFoldDigestSkipsUnfolded(t *testing.T) {
	e := NewDigestEntry(0, 0, 0, 0, "")
	want, _ := FoldDigest([]DigestEntry{e})
	if got, err := FoldDigest([]DigestEntry{{}, e, {}}); err != nil || got != want {
		t.Errorf("zero entries changed the fold: %v (%v), want %v", got, err, want)
	}
	if (DigestEntry{}).Folded() || !NewDigestEntry(0, 0, 0, 0, "").Folded() {
		t.Error("Folded: want false for the zero entry only, even for seq 0 of an empty prompt")
	}
}
