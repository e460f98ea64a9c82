package dataset

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/inferprobe/inferprobe/scenarios"
)

// FormatWekaAgentX is WEKA's AgentX agentic traces, in JSON.
const FormatWekaAgentX = "weka_agentx"

func init() {
	registerFormat(scenarios.FileFormat{Name: FormatWekaAgentX, AIPerfName: "weka_trace", Timestamps: scenarios.TimestampsAlways}, newWeka)
}

// weka reads WEKA AgentX agentic traces: one JSON trace object, or several in
// a row (JSONL). Each trace is an agent's session; its requests and those of
// its subagents (each a session of its own, named trace/agent) are flattened
// and sorted by their timestamps "t" (seconds), which already hold the think
// times between them. Traces are JSON objects, so they are read whole.
type weka struct {
	recs []record
}

type wekaRequest struct {
	T        *float64      `json:"t"`
	Type     string        `json:"type"`
	In       *int          `json:"in"`
	Out      *int          `json:"out"`
	HashIDs  []int64       `json:"hash_ids"`
	AgentID  string        `json:"agent_id"`
	Requests []wekaRequest `json:"requests"`
}

const wekaExample = `{"id": "t1", "block_size": 64, "requests": [{"t": 0, "type": "n", "in": 900, "out": 40, "hash_ids": [1, 2]}]}`

func newWeka(in input, name string) (reader, error) {
	dec := json.NewDecoder(bufio.NewReaderSize(in, 64<<10))
	w := &weka{}
	for n := 1; ; n++ {
		start := dec.InputOffset()
		var tr struct {
			ID        string        `json:"id"`
			BlockSize int           `json:"block_size"`
			Requests  []wekaRequest `json:"requests"`
		}
		err := dec.Decode(&tr)
		if errors.Is(err, io.EOF) {
			break
		}
		bad := func(format string, args ...any) error {
			return &LineError{File: name, Line: valueLine(in, start), Reason: fmt.Sprintf("trace %d: ", n) + fmt.Sprintf(format, args...)}
		}
		if err != nil {
			return nil, bad("%s; want e.g. %s", strings.TrimPrefix(err.Error(), "json: "), wekaExample)
		}
		if tr.BlockSize < 0 {
			return nil, bad("block_size %d; it must be >= 1", tr.BlockSize)
		}
		if tr.ID == "" {
			tr.ID = fmt.Sprintf("trace-%d", n)
		}
		if err := w.add(tr.Requests, tr.ID, tr.BlockSize, 0); err != nil {
			return nil, bad("%v", err)
		}
	}
	// Timestamps are the order to replay; a stable sort keeps the file's
	// order among equal ones.
	slices.SortStableFunc(w.recs, func(a, b record) int {
		switch {
		case a.ts < b.ts:
			return -1
		case a.ts > b.ts:
			return 1
		}
		return 0
	})
	return w, nil
}

// add flattens reqs of session into w; depth bounds the nesting of subagents.
func (w *weka) add(reqs []wekaRequest, session string, block, depth int) error {
	if depth > 8 {
		return errors.New("subagents nested more than 8 deep")
	}
	for i, r := range reqs {
		if r.Type == "subagent" {
			if err := w.add(r.Requests, session+"/"+r.AgentID, block, depth+1); err != nil {
				return err
			}
			continue
		}
		if r.T == nil || r.In == nil {
			return fmt.Errorf("request %d of %s lacks t or in; want e.g. %s", i+1, session, wekaExample)
		}
		if *r.In < 0 || r.Out != nil && *r.Out < 0 {
			return fmt.Errorf("request %d of %s has a negative length (in %d tokens, out %s); lengths are >= 0", i+1, session, *r.In, outputText(outputLength(r.Out)))
		}
		rec := record{ts: *r.T * 1000, hasTS: true, in: *r.In, out: outputLength(r.Out), block: block, session: session}
		for _, id := range r.HashIDs {
			rec.hashIDs = append(rec.hashIDs, uint64(id))
		}
		w.recs = append(w.recs, rec)
	}
	return nil
}

// valueLine is the line of the JSON value that starts after the whitespace
// at off (the decoder's offset is the end of the value before).
func valueLine(in input, off int64) int {
	var b [1]byte
	for k := 0; k < 1<<16; k++ {
		if n, _ := in.ReadAt(b[:], off); n == 0 || !strings.ContainsRune(" \t\r\n", rune(b[0])) {
			break
		}
		off++
	}
	return lineOf(in, off)
}

func (w *weka) next() (record, error) {
	if len(w.recs) == 0 {
		return record{}, io.EOF
	}
	rec := w.recs[0]
	w.recs = w.recs[1:]
	return rec, nil
}
