package simulator

import (
	"encoding/json"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Server is a simulated OpenAI-compatible LLM server.
type Server struct {
	cfg       Config // with defaults applied; its Profile is only the initial one
	logger    *slog.Logger
	modelJSON []byte   // the model name as a JSON string, for hand-written chunks
	slots     *limiter // nil when concurrency is unlimited
	started   int64    // unix seconds, the model's "created"
	mux       *http.ServeMux
	metrics   *serverMetrics

	profile  atomic.Pointer[Profile] // read once per request, without a lock
	updateMu sync.Mutex              // serialises profile updates, so partial updates do not lose each other

	seedMu sync.Mutex
	seeds  *rand.Rand // hands each request its own seed
}

// New validates cfg, applies its defaults and builds a Server. A nil
// logger discards logs.
func New(cfg Config, logger *slog.Logger) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	modelJSON, err := json.Marshal(cfg.Model)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:       cfg,
		logger:    logger,
		modelJSON: modelJSON,
		started:   time.Now().Unix(),
		seeds:     rand.New(rand.NewPCG(cfg.Seed, 0)),
		metrics:   newServerMetrics(cfg.Model),
	}
	if cfg.MaxConcurrency > 0 {
		s.slots = newLimiter(cfg.MaxConcurrency)
	}
	p := cfg.Profile
	s.profile.Store(&p)

	s.mux = http.NewServeMux()
	s.mux.HandleFunc("POST /v1/chat/completions", s.completions(&chatEndpoint))
	s.mux.HandleFunc("POST /v1/completions", s.completions(&textEndpoint))
	s.mux.HandleFunc("POST /v1/responses", s.serveAPI(&responsesAPI))
	s.mux.HandleFunc("POST /v1/messages", s.serveAPI(&messagesAPI))
	s.mux.HandleFunc("POST /generate_stream", s.serveAPI(tgiAPI(true)))
	s.mux.HandleFunc("POST /generate", s.serveAPI(tgiAPI(false)))
	s.mux.HandleFunc("POST /v1/embeddings", s.serveRetrieval(&embeddingsAPI))
	s.mux.HandleFunc("POST /v1/ranking", s.serveRetrieval(&nimRankingAPI))
	s.mux.HandleFunc("POST /v2/rerank", s.serveRetrieval(&cohereRerankAPI))
	s.mux.HandleFunc("POST /rerank", s.serveRetrieval(&teiRerankAPI))
	s.mux.HandleFunc("GET /v1/models", s.models)
	s.mux.Handle("GET /metrics", s.metrics.handler())
	s.mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	s.mux.HandleFunc("GET /admin/profile", s.getProfile)
	s.mux.HandleFunc("PUT /admin/profile", s.updateProfile)
	s.mux.HandleFunc("POST /admin/profile", s.updateProfile)
	return s, nil
}

// Handler serves the simulator's HTTP API.
func (s *Server) Handler() http.Handler { return s.mux }

// Profile returns the current latency and fault profile.
func (s *Server) Profile() Profile { return *s.profile.Load() }

// SetProfile validates p and makes it the profile for requests that start
// from now on; requests in flight keep theirs.
func (s *Server) SetProfile(p Profile) error {
	s.updateMu.Lock()
	defer s.updateMu.Unlock()
	return s.setProfileLocked(p)
}

func (s *Server) setProfileLocked(p Profile) error {
	if err := p.Validate(); err != nil {
		return err
	}
	p = p.normalized()
	s.profile.Store(&p)
	return nil
}

// requestRand returns a generator for one request, seeded from the
// server's, and an id derived from that seed. The lock is taken once per
// request; the request then draws without one.
func (s *Server) requestRand() (*rand.Rand, string) {
	s.seedMu.Lock()
	a, b := s.seeds.Uint64(), s.seeds.Uint64()
	s.seedMu.Unlock()
	return rand.New(rand.NewPCG(a, b)), strconv.FormatUint(a, 16)
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	writeJSON(w, http.StatusOK, struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{
		Object: "list",
		// owned_by says what it is: the simulator never passes for a real server.
		Data: []model{{ID: s.cfg.Model, Object: "model", Created: s.started, OwnedBy: "inferprobe-simulator"}},
	})
}
