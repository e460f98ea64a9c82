package dataset

import (
	"fmt"
	"strings"

	"github.com/inferprobe/inferprobe/scenarios"
)

// FormatMultiTurn is AIPerf's multi_turn JSONL: one session a line.
const FormatMultiTurn = "multi_turn"

func init() {
	registerFormat(scenarios.FileFormat{Name: FormatMultiTurn}, newMultiTurn)
}

// multiTurn reads AIPerf's multi_turn JSONL: one session a line.
type multiTurn struct{ *lines }

func newMultiTurn(in input, name string) (reader, error) {
	return multiTurn{newLines(in, name)}, nil
}

const multiTurnExample = `{"session_id": "s1", "turns": [{"text": "Hi", "output_length": 16}, {"text": "More?", "delay": 2000}]}`

func (r multiTurn) next() (record, error) {
	b, err := r.lines.next()
	if err != nil {
		return record{}, err
	}
	var e struct {
		SessionID string `json:"session_id"`
		Turns     []struct {
			singleTurnLine
			Role string `json:"role"`
		} `json:"turns"`
	}
	if err := r.decode(b, &e, FormatMultiTurn, multiTurnExample); err != nil {
		return record{}, err
	}
	rec := record{line: r.line, session: e.SessionID}
	if rec.session == "" {
		rec.session = fmt.Sprintf("line-%d", r.line)
	}
	users := 0
	for i, t := range e.Turns {
		text, err := t.join()
		if err != nil {
			return record{}, r.errorf("turn %d %v", i+1, err)
		}
		media, err := t.values()
		if err != nil {
			return record{}, r.errorf("turn %d %v", i+1, err)
		}
		if strings.TrimSpace(text) == "" {
			if !media.empty() {
				return record{}, r.errorf("turn %d %s", i+1, mediaWithoutText)
			}
			return record{}, r.errorf("turn %d has no text", i+1)
		}
		tu := turn{text: text, out: outputAbsent, media: media}
		switch t.Role {
		case "system":
			// AIPerf hoists a leading system turn of text only into the
			// conversation's system message.
			if i > 0 || !media.empty() || t.Timestamp != nil || t.Delay != nil || t.OutputLength != nil {
				return record{}, r.errorf("turn %d has role %q; want user or assistant (a system turn leads, with text only)", i+1, t.Role)
			}
			rec.system = text
			continue
		case "", "user":
			users++
			if t.OutputLength != nil {
				tu.out = *t.OutputLength
			}
			if t.Delay != nil {
				tu.delay = *t.Delay
			}
		case "assistant":
			if !media.empty() {
				return record{}, r.errorf("turn %d is the assistant's and carries images or audio; bench sends an assistant turn's text only", i+1)
			}
			tu.assistant = true
		default:
			return record{}, r.errorf("turn %d has role %q; want user or assistant", i+1, t.Role)
		}
		rec.turns = append(rec.turns, tu)
		if len(rec.turns) == 1 && t.Timestamp != nil {
			rec.ts, rec.hasTS = *t.Timestamp, true
		}
	}
	if users == 0 {
		return record{}, r.errorf("has no user turn; want e.g. %s", multiTurnExample)
	}
	return rec, nil
}
