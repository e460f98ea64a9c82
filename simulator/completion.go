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
	ep           *endpoint
	id           string
	created      int64
	promptTokens int
	finish       string // "length" or "stop"
	includeUsage bool
	gen          generation
}

// completions serves POST /v1/chat/completions and POST /v1/completions.
func (s *Server) completions(ep *endpoint) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req, lim, ok := s.parse(w, r, ep)
		if !ok {
			return
		}

		// Every random choice, in a fixed order so that the same seed
		// gives the same lengths whatever the profile or the options.
		rng, id := s.requestRand()
		p := s.profile.Load()
		fail := rng.Float64() < p.ErrorRate
		tokens, finish := outputLength(rng, s.cfg.NaturalTokens, lim.minTokens, lim.maxTokens, req.IgnoreEOS)
		stalls := rng.Float64() < p.StallRate
		stallAt := 1 + rng.IntN(tokens)
		ttft := newSampler(p.Distribution, p.TTFT, p.Jitter).draw(rng) + time.Duration(lim.promptTokens)*p.PrefillPerToken

		if fail { // at once, without queueing: a broken server answers fast
			writeError(w, http.StatusInternalServerError, "server_error", "", "simulated server error (the simulator's error rate is "+strconv.FormatFloat(p.ErrorRate, 'g', -1, 64)+")")
			return
		}

		queued := time.Now()
		if s.slots != nil {
			if err := s.slots.acquire(r.Context()); err != nil {
				return // the client left while queued
			}
			defer s.slots.release()
		}
		admitted := time.Now()

		j := &job{
			ep:           ep,
			id:           ep.idPrefix + id,
			created:      admitted.Unix(),
			promptTokens: lim.promptTokens,
			finish:       finish,
			includeUsage: req.StreamOptions.IncludeUsage,
			gen: generation{
				rng:      rng,
				itl:      newSampler(p.Distribution, p.ITL, p.Jitter),
				tokens:   tokens,
				perChunk: s.cfg.TokensPerChunk,
				due:      admitted.Add(ttft),
			},
		}
		var err error
		if req.Stream {
			if stalls {
				j.gen.stallAt, j.gen.stall = stallAt, p.StallDuration
			}
			err = s.stream(r.Context(), w, j)
		} else {
			err = s.respond(r.Context(), w, j)
		}
		if s.logger.Enabled(r.Context(), slog.LevelDebug) {
			s.logger.LogAttrs(r.Context(), slog.LevelDebug, "request served",
				slog.String("endpoint", ep.name), slog.Bool("stream", req.Stream),
				slog.Int("prompt_tokens", lim.promptTokens), slog.Int("completion_tokens", tokens),
				slog.Duration("queued", admitted.Sub(queued)), slog.Bool("stalled", j.gen.stallAt > 0),
				slog.Any("err", err))
		}
	}
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
