package record_test

import (
	"testing"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/record/recordtest"
)

// TestMarshalCarriesEveryField: the encoding of shard files and of records
// between replicas carries every field of a Record, those added later too.
func TestMarshalCarriesEveryField(t *testing.T) {
	want := recordtest.Full()
	b, err := record.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := record.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if differ := recordtest.Diff(got, want); len(differ) > 0 {
		t.Errorf("fields lost by Marshal and Unmarshal: %v\nencoded: %s", differ, b)
	}
}
