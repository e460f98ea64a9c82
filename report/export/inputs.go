package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
)

// WriteInputs writes inputs.json as AIPerf 0.13 lays it out: the payloads
// sent, by session ({"data": [{"session_id", "payloads": […]}]}), each the
// exact body of its request (indented, as AIPerf writes them). A session's
// id is the conversation_id of its lines in profile_export.jsonl. Requests
// without a body (never built, or past the report's budget) are left out;
// the JSON's inferprobe.requests_without_details counts the second kind.
func WriteInputs(w io.Writer, r Run) error {
	bw := bufio.NewWriter(w)
	convs := conversations(r.Requests)
	var order []string
	payloads := map[string][]int{} // session → indexes of its requests, in order
	for i, c := range convs {
		if r.Requests[i].Body == nil {
			continue
		}
		if _, ok := payloads[c.id]; !ok {
			order = append(order, c.id)
		}
		payloads[c.id] = append(payloads[c.id], i)
	}
	bw.WriteString("{\n  \"data\": [")
	var indented bytes.Buffer
	for n, id := range order {
		if n > 0 {
			bw.WriteByte(',')
		}
		sid, _ := json.Marshal(id)
		bw.WriteString("\n    {\n      \"session_id\": ")
		bw.Write(sid)
		bw.WriteString(",\n      \"payloads\": [")
		for k, i := range payloads[id] {
			if k > 0 {
				bw.WriteByte(',')
			}
			indented.Reset()
			if err := json.Indent(&indented, r.Requests[i].Body, "        ", "  "); err != nil {
				return err
			}
			bw.WriteString("\n        ")
			bw.Write(indented.Bytes())
		}
		bw.WriteString("\n      ]\n    }")
	}
	if len(order) > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("]\n}")
	return bw.Flush()
}
