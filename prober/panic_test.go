package prober

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/record"
)

// panickingSource fails the way an unbounded length once did, deep inside
// building a prompt.
type panickingSource struct{}

func (panickingSource) Next() (dataset.Item, error) {
	panic("runtime error: makeslice: len out of range")
}

// TestBuildPanicStopsProbe checks that a panic while building a request
// stops the probe with a dataset failure, recorded once, instead of
// ending the process that runs it.
func TestBuildPanicStopsProbe(t *testing.T) {
	p := newProbe(t, probeYAML(1, "{rate: 100}", ""), record.Shard{})
	p.source = panickingSource{}
	rec := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(context.Background(), context.Background(), instantExec{}, rec)
	}()
	select {
	case <-done:
	case <-time.After(patience):
		t.Fatal("Run did not stop")
	}
	got := rec.bySeq()
	if len(got) != 1 || got[0].Reason != record.ReasonDataset || !strings.Contains(got[0].Err, "panicked") || !strings.Contains(got[0].Err, "makeslice") {
		t.Fatalf("records %+v; want one dataset failure that says the build panicked, and why", got)
	}
}
