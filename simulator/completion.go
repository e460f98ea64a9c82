package simulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"
)

// maxRequestBody bounds a request body: far above any real prompt
// (a 128k-token prompt of words is under 1 MiB), far below memory trouble.
const maxRequestBody = 16 << 20

// job is an admitted request.
type job struct {
	ep           *endpoint // chat or completions; nil for the other APIs
	api          *api      // the other generation APIs; nil for chat and completions
	id           string
	created      int64
	promptTokens int
	finish       string // "length" or "stop"
	includeUsage bool
	gen          generation
}

// genRequest is what a generation request asks for, whatever its API.
type genRequest struct {
	lim          limits
	stream       bool
	includeUsage bool
	ignoreEOS    bool
}

// completions serves POST /v1/chat/completions and POST /v1/completions.
func (s *Server) completions(ep *endpoint) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req, lim, ok := s.parse(w, r, ep)
		if !ok {
			return
		}
		s.generate(w, r, genRequest{
			lim:          lim,
			stream:       req.Stream,
			includeUsage: req.StreamOptions.IncludeUsage && !s.cfg.OmitUsage,
			ignoreEOS:    req.IgnoreEOS,
		}, &job{ep: ep, id: ep.idPrefix})
	}
}

// generate queues, decodes and answers a parsed generation request; j
// holds its API and id prefix.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, g genRequest, j *job) {
	lim := g.lim
	if s.cfg.IgnoreMinTokens {
		// A server that ignores the pinned length: it stops when it likes.
		lim.minTokens, g.ignoreEOS = 0, false
	}
	// Every random choice, in a fixed order so that the same seed
	// gives the same lengths whatever the profile or the options.
	rng, id := s.requestRand()
	p := s.profile.Load()
	fail := rng.Float64() < p.ErrorRate
	tokens, finish := outputLength(rng, s.cfg.NaturalTokens, lim.minTokens, lim.maxTokens, g.ignoreEOS)
	stalls := rng.Float64() < p.StallRate
	stallAt := 1 + rng.IntN(tokens)
	ttft := newSampler(p.Distribution, p.TTFT, p.Jitter).draw(rng) + time.Duration(lim.promptTokens)*p.PrefillPerToken +
		time.Duration(lim.images)*s.cfg.PrefillPerImage + time.Duration(lim.audioSeconds*float64(s.cfg.PrefillPerAudioSecond))

	if fail { // at once, without queueing: a broken server answers fast
		writeError(w, http.StatusInternalServerError, "server_error", "", "simulated server error (the simulator's error rate is "+strconv.FormatFloat(p.ErrorRate, 'g', -1, 64)+")")
		return
	}

	queued := time.Now()
	s.metrics.waiting.Inc()
	if s.slots != nil {
		if err := s.slots.acquire(r.Context()); err != nil {
			s.metrics.waiting.Dec()
			return // the client left while queued
		}
		defer s.slots.release()
	}
	admitted := time.Now()
	s.metrics.admit(lim.promptTokens + tokens)

	perChunk := s.cfg.TokensPerChunk
	if j.api != nil && j.api.perToken {
		perChunk = 1
	}
	j.id += id
	j.created = admitted.Unix()
	j.promptTokens = lim.promptTokens
	j.finish = finish
	j.includeUsage = g.includeUsage
	j.gen = generation{
		rng:        rng,
		itl:        newSampler(p.Distribution, p.ITL, p.Jitter),
		tokens:     tokens,
		perChunk:   perChunk,
		due:        admitted.Add(ttft),
		observeITL: s.metrics.itl.Observe,
	}
	if j.ep != nil { // the other APIs send no reasoning
		j.gen.reasoningTokens = min(s.cfg.ReasoningTokens, tokens)
	}
	if g.stream && stalls {
		j.gen.stallAt, j.gen.stall = stallAt, p.StallDuration
	}
	var err error
	switch {
	case !g.stream:
		err = s.respond(r.Context(), w, j)
	case j.api != nil:
		err = s.streamAPI(r.Context(), w, j)
	default:
		err = s.stream(r.Context(), w, j)
	}
	served := finish
	if err != nil {
		served = ""
	}
	s.metrics.done(lim.promptTokens+tokens, lim.promptTokens, tokens, queued, admitted.Add(ttft), served)
	if s.logger.Enabled(r.Context(), slog.LevelDebug) {
		s.logger.LogAttrs(r.Context(), slog.LevelDebug, "request served",
			slog.String("endpoint", j.name()), slog.Bool("stream", g.stream),
			slog.Int("prompt_tokens", lim.promptTokens), slog.Int("completion_tokens", tokens),
			slog.Duration("queued", admitted.Sub(queued)), slog.Bool("stalled", j.gen.stallAt > 0),
			slog.Any("err", err))
	}
}

func (j *job) name() string {
	if j.api != nil {
		return j.api.name
	}
	return j.ep.name
}

// parse decodes and checks a request, answering the client itself when
// the request is bad.
func (s *Server) parse(w http.ResponseWriter, r *http.Request, ep *endpoint) (request, limits, bool) {
	var req request
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequestBody)).Decode(&req); err != nil {
		if tooBig := (*http.MaxBytesError)(nil); errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "", fmt.Sprintf("request body larger than %d bytes", tooBig.Limit))
		} else {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "", "invalid JSON body: "+err.Error())
		}
		return req, limits{}, false
	}
	if req.Model != "" && req.Model != s.cfg.Model {
		writeError(w, http.StatusNotFound, "NotFoundError", "model", fmt.Sprintf("The model `%s` does not exist.", req.Model))
		return req, limits{}, false
	}
	lim, bad := req.limits(ep.chat, s.cfg.DefaultMaxTokens)
	if bad != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", bad.param, bad.msg)
		return req, limits{}, false
	}
	return req, lim, true
}
