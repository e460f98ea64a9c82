package prober

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/scenarios"
)

// Reranking endpoint types.
const (
	EndpointNIMRanking   = "nim_ranking"
	EndpointCohereRerank = "cohere_rerank"
	EndpointTEIRerank    = "tei_rerank"
)

func init() {
	registerEndpoint(scenarios.EndpointType{
		Name: EndpointNIMRanking, Path: "/ranking", Ranks: true,
		Description: "NVIDIA NIM reranking, url http://HOST/v1",
	}, statelessCodec(rankingCodec{api: nimRanking}))
	registerEndpoint(scenarios.EndpointType{
		Name: EndpointCohereRerank, Path: "/rerank", Version: "/v2", Ranks: true,
		Description: "Cohere rerank v2, url https://api.cohere.com/v2",
	}, statelessCodec(rankingCodec{api: cohereRerank}))
	registerEndpoint(scenarios.EndpointType{
		Name: EndpointTEIRerank, Path: "/rerank", AtRoot: true, Ranks: true,
		Description: "text-embeddings-inference rerank, url of the server root",
	}, statelessCodec(rankingCodec{api: teiRerank}))
}

// Reranking APIs: the same job, three request shapes.
type rankingAPI uint8

const (
	nimRanking   rankingAPI = iota // NVIDIA NIM: POST /v1/ranking
	cohereRerank                   // Cohere: POST /v2/rerank
	teiRerank                      // Hugging Face TEI: POST /rerank
)

// rankingCodec sends a prompt's query and passages to rerank: those a
// synthetic ranking dataset drew, else the prompt split by queryAndPassages.
type rankingCodec struct {
	notStreamed
	api rankingAPI
}

// rankingPassages is how many passages a prompt of one line is cut into.
const rankingPassages = 4

// queryAndPassages splits a prompt into a query and passages: by lines when
// it has several (the first is the query), else into 1+rankingPassages runs
// of words of equal length, the first being the query.
func queryAndPassages(text string) (string, []string) {
	if lines := strings.FieldsFunc(text, func(r rune) bool { return r == '\n' }); len(lines) > 1 {
		return lines[0], lines[1:]
	}
	words := strings.Fields(text)
	parts := make([]string, 0, 1+rankingPassages)
	for i := range 1 + rankingPassages {
		lo, hi := i*len(words)/(1+rankingPassages), (i+1)*len(words)/(1+rankingPassages)
		if lo < hi {
			parts = append(parts, strings.Join(words[lo:hi], " "))
		}
	}
	switch len(parts) {
	case 0:
		return text, []string{text}
	case 1:
		return parts[0], parts
	}
	return parts[0], parts[1:]
}

func (c rankingCodec) body(t *Target, p dataset.Prompt, params map[string]any) any {
	query, passages := p.Text, p.Passages
	if passages == nil {
		query, passages = queryAndPassages(promptText(p))
	}
	body := withParams(params, 4)
	switch c.api {
	case nimRanking:
		body["model"] = t.Model
		body["query"] = map[string]string{"text": query}
		texts := make([]map[string]string, len(passages))
		for i, s := range passages {
			texts[i] = map[string]string{"text": s}
		}
		body["passages"] = texts
	case cohereRerank:
		body["model"] = t.Model
		body["query"] = query
		body["documents"] = passages
	case teiRerank: // serves one model, named at its start
		body["query"] = query
		body["texts"] = passages
	}
	return body
}

func (c rankingCodec) reply(data []byte, info *chunkInfo, _ *[]byte) error {
	if c.api == teiRerank && bytes.HasPrefix(bytes.TrimSpace(data), []byte("[")) {
		var scores []json.RawMessage
		return json.Unmarshal(data, &scores)
	}
	var r struct {
		Usage *struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
		Meta struct {
			Tokens *struct {
				InputTokens int `json:"input_tokens"`
			} `json:"tokens"`
		} `json:"meta"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	info.errValue = r.Error
	switch {
	case r.Usage != nil:
		info.hasUsage, info.usage.PromptTokens = true, r.Usage.PromptTokens
	case r.Meta.Tokens != nil:
		info.hasUsage, info.usage.PromptTokens = true, r.Meta.Tokens.InputTokens
	}
	return nil
}
