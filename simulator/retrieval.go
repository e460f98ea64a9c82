package simulator

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// retrieval is an API that reads its input and answers once, generating
// nothing: embeddings and reranking. Its latency is the time to first
// token (prefill) and nothing more.
type retrieval struct {
	// parse reads the request and returns how many prompt tokens it holds
	// and how many items (inputs or passages) to answer for.
	parse func(body []byte) (prompt, items int, bad *badRequest)
	reply func(s *Server, prompt, items int) any
}

func (s *Server) serveRetrieval(rt *retrieval) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		prompt, items, bad := rt.parse(body)
		if bad != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", bad.param, bad.msg)
			return
		}
		rng, _ := s.requestRand()
		p := s.profile.Load()
		if rng.Float64() < p.ErrorRate {
			writeError(w, http.StatusInternalServerError, "server_error", "", "simulated server error (the simulator's error rate is "+strconv.FormatFloat(p.ErrorRate, 'g', -1, 64)+")")
			return
		}
		if s.slots != nil {
			if err := s.slots.acquire(r.Context()); err != nil {
				return
			}
			defer s.slots.release()
		}
		due := time.Now().Add(newSampler(p.Distribution, p.TTFT, p.Jitter).draw(rng) + time.Duration(prompt)*p.PrefillPerToken)
		var c clock
		defer c.stop()
		if c.sleepUntil(r.Context(), due) != nil {
			return
		}
		writeJSON(w, http.StatusOK, rt.reply(s, prompt, items))
	}
}

// scores are made-up relevance scores, falling with the index.
func scores(items int, key string) []map[string]any {
	out := make([]map[string]any, items)
	for i := range items {
		out[i] = map[string]any{"index": i, key: 1 / float64(i+2)}
	}
	return out
}

var embeddingsAPI = retrieval{
	parse: func(body []byte) (int, int, *badRequest) {
		var req struct {
			Input json.RawMessage `json:"input"`
		}
		if bad := decodeInto(body, &req); bad != nil {
			return 0, 0, bad
		}
		var n promptWords
		if len(req.Input) == 0 || json.Unmarshal(req.Input, &n) != nil {
			return 0, 0, &badRequest{"input", "input must be a string, an array of strings or token ids"}
		}
		return int(n), 1, nil
	},
	reply: func(s *Server, prompt, _ int) any {
		return map[string]any{
			"object": "list", "model": s.cfg.Model,
			"data":  []any{map[string]any{"object": "embedding", "index": 0, "embedding": []float64{0.1, -0.2, 0.3, 0.05}}},
			"usage": map[string]int{"prompt_tokens": prompt, "total_tokens": prompt},
		}
	},
}

// countAll sums the words of a query and its passages.
func countAll(query promptWords, passages []promptWords) int {
	n := int(query)
	for _, p := range passages {
		n += int(p)
	}
	return n
}

// nimRankingAPI is NVIDIA NIM's POST /v1/ranking.
var nimRankingAPI = retrieval{
	parse: func(body []byte) (int, int, *badRequest) {
		var req struct {
			Query    promptWords   `json:"query"`
			Passages []promptWords `json:"passages"`
		}
		if bad := decodeInto(body, &req); bad != nil {
			return 0, 0, bad
		}
		if len(req.Passages) == 0 {
			return 0, 0, &badRequest{"passages", "passages must be a non-empty array of {text}"}
		}
		return countAll(req.Query, req.Passages), len(req.Passages), nil
	},
	reply: func(_ *Server, prompt, items int) any {
		return map[string]any{"rankings": scores(items, "logit"), "usage": map[string]int{"prompt_tokens": prompt, "total_tokens": prompt}}
	},
}

// cohereRerankAPI is Cohere's POST /v2/rerank.
var cohereRerankAPI = retrieval{
	parse: func(body []byte) (int, int, *badRequest) {
		var req struct {
			Query     promptWords   `json:"query"`
			Documents []promptWords `json:"documents"`
		}
		if bad := decodeInto(body, &req); bad != nil {
			return 0, 0, bad
		}
		if len(req.Documents) == 0 {
			return 0, 0, &badRequest{"documents", "documents must be a non-empty array"}
		}
		return countAll(req.Query, req.Documents), len(req.Documents), nil
	},
	reply: func(_ *Server, prompt, items int) any {
		return map[string]any{
			"id": "rerank", "results": scores(items, "relevance_score"),
			"meta": map[string]any{"billed_units": map[string]int{"search_units": 1}, "tokens": map[string]int{"input_tokens": prompt, "output_tokens": 0}},
		}
	},
}

// teiRerankAPI is text-embeddings-inference's POST /rerank: no usage in
// the reply, a bare array of scores.
var teiRerankAPI = retrieval{
	parse: func(body []byte) (int, int, *badRequest) {
		var req struct {
			Query promptWords   `json:"query"`
			Texts []promptWords `json:"texts"`
		}
		if bad := decodeInto(body, &req); bad != nil {
			return 0, 0, bad
		}
		if len(req.Texts) == 0 {
			return 0, 0, &badRequest{"texts", "texts must be a non-empty array"}
		}
		return countAll(req.Query, req.Texts), len(req.Texts), nil
	},
	reply: func(_ *Server, _, items int) any { return scores(items, "score") },
}
