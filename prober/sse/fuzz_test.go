package sse

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzReader checks that any input, read whole or split any way, gives the
// same events and end as a plain reading of the spec (reference), with the
// buffers inside their bounds and Next always terminating. The seed corpus in
// testdata/fuzz/FuzzReader holds the TestReader cases.
func FuzzReader(f *testing.F) {
	f.Fuzz(func(t *testing.T, input []byte, max uint16) {
		maxEvent := int(max%4096) + 1
		want, wantErr := reference(input, maxEvent)
		sources := map[string]io.Reader{
			"whole":         bytes.NewReader(input),
			"one byte":      iotest.OneByteReader(bytes.NewReader(input)),
			"half":          iotest.HalfReader(bytes.NewReader(input)),
			"data with EOF": iotest.DataErrReader(bytes.NewReader(input)),
		}
		for name, src := range sources {
			clock, _ := fakeClock()
			r := NewReader(src, clock, maxEvent)
			got, ats, err := readAll(t, r, len(input))
			if err != wantErr || !equalEvents(got, want) {
				t.Fatalf("%s, max %d: got %q, %v; want %q, %v", name, maxEvent, got, err, want, wantErr)
			}
			for i, at := range ats {
				if (i > 0 && at.Before(ats[i-1])) || at.After(r.LastRead()) {
					t.Fatalf("%s: event times %v out of order or after LastRead %v", name, ats, r.LastRead())
				}
			}
		}
	})
}

// reference is the spec's event stream interpretation written for clarity,
// on the whole input at once, plus Reader's size limit and end-of-stream
// rules.
func reference(input []byte, maxEvent int) ([]ev, error) {
	s := strings.TrimPrefix(string(input), "\xEF\xBB\xBF")
	var (
		evs              []ev
		data, typ, id    string
		hasData, pending bool
	)
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			break
		}
		line := s[:i]
		if len(line) > maxEvent {
			return evs, ErrTooLarge
		}
		if strings.HasPrefix(s[i:], "\r\n") {
			i++
		}
		s = s[i+1:]
		switch {
		case line == "":
			if hasData {
				evs = append(evs, ev{typ, data, id})
			}
			data, typ, hasData, pending = "", "", false, false
		case line[0] == ':':
		default:
			pending = true
			name, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch name {
			case "data":
				if hasData {
					data += "\n"
				}
				data, hasData = data+value, true
				if len(data) > maxEvent {
					return evs, ErrTooLarge
				}
			case "event":
				typ = value
			case "id":
				if !strings.Contains(value, "\x00") {
					id = value
				}
			}
		}
	}
	switch {
	case len(s) > maxEvent:
		return evs, ErrTooLarge
	case len(s) > 0 || pending:
		return evs, ErrIncomplete
	}
	return evs, io.EOF
}
