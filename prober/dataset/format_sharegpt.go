package dataset

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/inferprobe/inferprobe/scenarios"
)

// FormatShareGPT is a ShareGPT JSON array of conversations.
const FormatShareGPT = "sharegpt"

func init() {
	registerFormat(scenarios.FileFormat{Name: FormatShareGPT, Timestamps: scenarios.TimestampsNever}, newShareGPT)
}

// shareGPT streams a ShareGPT JSON array one conversation at a time. Each
// conversation's first human turn is the prompt and the gpt turn answering it
// sets the output length (its length in words, about its tokens);
// conversations without such a pair are skipped.
type shareGPT struct {
	in    input
	name  string
	dec   *json.Decoder
	entry int
	start bool
}

func newShareGPT(in input, name string) (reader, error) {
	return &shareGPT{in: in, name: name, dec: json.NewDecoder(bufio.NewReaderSize(in, 64<<10))}, nil
}

const shareGPTExample = `[{"id": "a", "conversations": [{"from": "human", "value": "Hi"}, {"from": "gpt", "value": "Hello!"}]}]`

// errorf reports a problem at the decoder's position, found by counting lines
// from the start (only when there is an error, so streaming stays cheap).
func (r *shareGPT) errorf(format string, args ...any) error {
	return &LineError{File: r.name, Line: lineOf(r.in, r.dec.InputOffset()),
		Reason: fmt.Sprintf("conversation %d: ", r.entry) + fmt.Sprintf(format, args...)}
}

func (r *shareGPT) next() (record, error) {
	if !r.start {
		r.start = true
		tok, err := r.dec.Token()
		if err == io.EOF {
			return record{}, io.EOF
		}
		if d, ok := tok.(json.Delim); err != nil || !ok || d != '[' {
			return record{}, &LineError{File: r.name, Line: 1, Reason: "a ShareGPT file is one JSON array, e.g. " + shareGPTExample}
		}
	}
	for r.dec.More() {
		r.entry++
		var c struct {
			Conversations []struct {
				From  string `json:"from"`
				Value string `json:"value"`
			} `json:"conversations"`
		}
		if err := r.dec.Decode(&c); err != nil {
			return record{}, r.errorf("%s; want e.g. %s", strings.TrimPrefix(err.Error(), "json: "), shareGPTExample)
		}
		conv := c.Conversations
		for i := 0; i+1 < len(conv); i++ {
			if conv[i].From == "human" && strings.TrimSpace(conv[i].Value) != "" && conv[i+1].From == "gpt" {
				return record{text: conv[i].Value, out: len(strings.Fields(conv[i+1].Value))}, nil
			}
		}
	}
	if _, err := r.dec.Token(); err != nil {
		return record{}, r.errorf("the array does not end: %v", err)
	}
	return record{}, io.EOF
}
