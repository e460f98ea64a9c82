package dataset

import (
	"errors"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/scenarios"
)

// fuzzLoad loads data as format under each timing the format allows and reads
// a pass and a half: a file either fails with a LineError or yields items a
// server can be sent, in time order when replayed. Seeds are in
// testdata/fuzz/<target>.
func fuzzLoad(f *testing.F, format string) {
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, timing := range []string{scenarios.TimingReplay, scenarios.TimingArrival} {
			if timing == scenarios.TimingReplay && (format == FormatShareGPT || format == FormatMultiTurn) {
				continue
			}
			s, err := load(format, timing, 3, data, nil)
			if err != nil {
				if le := (*LineError)(nil); !errors.As(err, &le) {
					t.Fatalf("%s: error %v is not a *LineError naming the file and line", timing, err)
				}
				continue
			}
			var last time.Duration
			// A budget of tokens keeps each run short: entries may ask for
			// up to maxTokens each, and building a prompt that long takes
			// about 0.1 s.
			budget := maxTokens
			for i := 0; i < int(min(s.count+s.count/2+1, 20)) && budget > 0; i++ {
				it, err := s.Next()
				if err != nil {
					t.Fatalf("%s: item %d: %v, though the file loaded", timing, i, err)
				}
				prompts := []Prompt{it.Prompt}
				for _, tu := range it.Turns {
					if tu.Delay < 0 {
						t.Fatalf("%s: item %d has a negative think time %v", timing, i, tu.Delay)
					}
					prompts = append(prompts, tu.Prompt)
				}
				for _, p := range prompts {
					budget -= p.InputTokens
					if p.InputTokens < 1 || p.OutputTokens < 1 || p.Text == "" {
						t.Fatalf("%s: item %d: prompt of %d tokens (%q), output %d; want >= 1 each", timing, i, p.InputTokens, p.Text, p.OutputTokens)
					}
				}
				if it.At < last || it.At < 0 || it.CancelAfter < 0 {
					t.Fatalf("%s: item %d at %v (cancel after %v) after one at %v", timing, i, it.At, it.CancelAfter, last)
				}
				last = it.At
			}
		}
	})
}

func FuzzLoadSingleTurn(f *testing.F) { fuzzLoad(f, FormatSingleTurn) }
func FuzzLoadMultiTurn(f *testing.F)  { fuzzLoad(f, FormatMultiTurn) }
func FuzzLoadShareGPT(f *testing.F)   { fuzzLoad(f, FormatShareGPT) }
func FuzzLoadMooncake(f *testing.F)   { fuzzLoad(f, FormatMooncake) }
func FuzzLoadBaseten(f *testing.F)    { fuzzLoad(f, FormatBaseten) }
func FuzzLoadWekaAgentX(f *testing.F) { fuzzLoad(f, FormatWekaAgentX) }
func FuzzLoadAzure(f *testing.F)      { fuzzLoad(f, FormatAzure) }
func FuzzLoadBurstGPT(f *testing.F)   { fuzzLoad(f, FormatBurstGPT) }
