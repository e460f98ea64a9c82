package daemon

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/inferprobe/inferprobe/scenarios"
)

// BurstControl is what the burst API drives; *Daemon implements it.
type BurstControl interface {
	Bursts() []BurstInfo
	TriggerBurst(name string, o BurstOverrides) (RunInfo, error)
	BurstRun(id string) (RunInfo, bool)
	CancelBurst(id string) (RunInfo, error)
	BurstRuns() []RunInfo
	// BurstArtifacts lists a run's artifacts and BurstArtifact opens one;
	// each fails with ErrUnknownRun, BurstArtifact also with ErrNoArtifact.
	BurstArtifacts(id string) ([]string, error)
	BurstArtifact(id, name string) (*Artifact, error)
}

// BurstAPIOptions configure the burst API (docs/http-api.md, Burst API).
type BurstAPIOptions struct {
	// Enabled turns the API on (--web.enable-burst-api); off, every path answers 403.
	Enabled bool
	// BasicAuth says --web.config.file sets basic_auth_users, so a request's
	// basic-auth user name has been checked and the audit log may name it.
	BasicAuth bool
	// Token, when not empty, must come as "Authorization: Bearer <token>"
	// (--web.burst-api.token-file, read with ReadTokenFile).
	Token string
	// TriggerInterval is the rate limit: one triggered run per interval, up
	// to TriggerBurst at once (--web.burst-api.rate-limit). 0 means
	// DefaultTriggerInterval.
	TriggerInterval time.Duration
}

const (
	// DefaultTriggerInterval and TriggerBurst bound how often the API can
	// start runs. A burst loads a production inference server on purpose, so
	// a script in a loop (or a leaked token) must not be able to keep it
	// saturated: three runs at once cover "trigger, fix, trigger again", and
	// one per 10 s after that is far more than a person needs. The limit is
	// global, not per client, because what it protects is the target, which
	// many clients could otherwise load together.
	DefaultTriggerInterval = 10 * time.Second
	TriggerBurst           = 3

	// maxBurstBody bounds a trigger's body: four overrides fit in far less.
	maxBurstBody = 4 << 10
	// maxTokenFile bounds the token file; a token is a line, not a document.
	maxTokenFile = 64 << 10

	burstAPIPath = "/api/v1/bursts"
	runsPath     = burstAPIPath + "/runs"
)

// ReadTokenFile reads the burst API's bearer token: a regular file (opening
// a FIFO would block the start; symbolic links are followed, as Kubernetes
// mounts secrets through them) of at most 64 KiB, surrounding white space
// removed, not empty.
func ReadTokenFile(path string) (string, error) {
	const fix = "; point --web.burst-api.token-file at a file that holds only the token"
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("cannot read the burst API token: %w%s", err, fix)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("burst API token file %s is not a regular file%s", path, fix)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("cannot read the burst API token: %w%s", err, fix)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	if err != nil {
		return "", fmt.Errorf("cannot read the burst API token: %w%s", err, fix)
	}
	if len(b) > maxTokenFile {
		return "", fmt.Errorf("burst API token file %s is over the %d-byte limit%s", path, maxTokenFile, fix)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("burst API token file %s is empty; write a token into it, e.g. openssl rand -hex 32 > %s", path, path)
	}
	return token, nil
}

// burstAPI serves /api/v1/bursts and everything under it.
type burstAPI struct {
	ctl       BurstControl
	opts      BurstAPIOptions
	tokenHash [sha256.Size]byte
	triggerMu sync.Mutex
	limiter   *rate.Limiter
	csrf      *http.CrossOriginProtection
	logger    *slog.Logger
}

// NewBurstAPI returns the handler of /api/v1/bursts and its subpaths. Every
// call is logged once (the audit line; reads at debug level); the token
// never is.
func NewBurstAPI(ctl BurstControl, opts BurstAPIOptions, logger *slog.Logger) http.Handler {
	if opts.TriggerInterval == 0 {
		opts.TriggerInterval = DefaultTriggerInterval
	}
	return &burstAPI{
		ctl:       ctl,
		opts:      opts,
		tokenHash: sha256.Sum256([]byte(opts.Token)),
		limiter:   rate.NewLimiter(rate.Every(opts.TriggerInterval), TriggerBurst),
		csrf:      http.NewCrossOriginProtection(),
		logger:    logger,
	}
}

// call is one API call as the audit line reports it.
type call struct {
	w         http.ResponseWriter
	r         *http.Request
	status    int
	principal string
	burst     string
	run       string
}

func (a *burstAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := &call{w: w, r: r, principal: "anonymous"}
	if user, _, ok := r.BasicAuth(); ok {
		// Checked by exporter-toolkit only when --web.config.file sets
		// basic_auth_users; otherwise it is only what the caller claims.
		c.principal = user
		if !a.opts.BasicAuth {
			c.principal = "unverified:" + user
		}
	}
	a.serve(c)
	attrs := []any{"method", r.Method, "path", r.URL.Path, "status", c.status,
		"remote", r.RemoteAddr, "principal", c.principal}
	if c.burst != "" {
		attrs = append(attrs, "burst", c.burst)
	}
	if c.run != "" {
		attrs = append(attrs, "run", c.run)
	}
	// Reads change nothing, and a client polling a run would flood the
	// log; what starts or stops a run stays at info, the audit line.
	level := slog.LevelInfo
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		level = slog.LevelDebug
	}
	a.logger.Log(r.Context(), level, "burst API call", attrs...)
}

func (a *burstAPI) serve(c *call) {
	r := c.r
	if cc, ok := a.ctl.(clusterControl); ok && strings.HasPrefix(r.URL.Path, clusterPath+"/") {
		a.serveCluster(c, cc)
		return
	}
	if !a.opts.Enabled {
		c.fail(http.StatusForbidden, "the burst API is not enabled; start inferprobe with --web.enable-burst-api")
		return
	}
	if !a.authorized(c) {
		return
	}
	// A burst loads a real server, so a web page the operator happens to
	// visit must not be able to start one (cross-site request forgery).
	if err := a.csrf.Check(r); err != nil {
		c.fail(http.StatusForbidden, "cross-origin request refused: call the burst API from a script or curl, not from another web site")
		return
	}

	rest := strings.TrimPrefix(r.URL.Path, burstAPIPath)
	switch {
	case rest == "":
		if c.allow(http.MethodGet) {
			c.json(http.StatusOK, map[string]any{"bursts": nonNil(a.ctl.Bursts()), "runs": nonNil(a.ctl.BurstRuns())})
		}
	case rest == "/runs" && r.Method != http.MethodPost:
		// POST here triggers a burst named "runs", like any other name.
		if c.allow(http.MethodGet, http.MethodPost) {
			c.json(http.StatusOK, map[string]any{"runs": nonNil(a.ctl.BurstRuns())})
		}
	case strings.HasPrefix(rest, "/runs/") && isSegment(rest[len("/runs/"):]):
		c.run = rest[len("/runs/"):]
		if c.allow(http.MethodGet, http.MethodDelete) {
			a.run(c)
		}
	case strings.HasPrefix(rest, "/runs/"):
		id, file, _ := strings.Cut(rest[len("/runs/"):], "/")
		c.run = id
		switch name, isFile := strings.CutPrefix(file, "artifacts/"); {
		case !isSegment(id):
			c.fail(http.StatusNotFound, "no such burst API path; a run's paths are /api/v1/bursts/runs/{id}, …/report.html, …/artifacts and …/artifacts/{file}")
		case file == "report.html" || isFile && isSegment(name):
			if c.allow(http.MethodGet, http.MethodHead) {
				a.artifact(c, strings.TrimPrefix(file, "artifacts/"))
			}
		case file == "artifacts":
			if c.allow(http.MethodGet) {
				a.artifacts(c)
			}
		default:
			c.fail(http.StatusNotFound, "no such burst API path; a run's paths are /api/v1/bursts/runs/{id}, …/report.html, …/artifacts and …/artifacts/{file}")
		}
	case strings.HasPrefix(rest, "/") && isSegment(rest[1:]):
		c.burst = rest[1:]
		if c.allow(http.MethodPost) {
			a.trigger(c)
		}
	default:
		c.fail(http.StatusNotFound, "no such burst API path; use /api/v1/bursts, /api/v1/bursts/{name}, /api/v1/bursts/runs, /api/v1/bursts/runs/{id} or its report.html and artifacts")
	}
}

// authorized checks the bearer token, when one is configured.
func (a *burstAPI) authorized(c *call) bool {
	if a.opts.Token == "" {
		return true
	}
	scheme, token, _ := strings.Cut(c.r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		c.w.Header().Set("WWW-Authenticate", `Bearer realm="inferprobe burst API"`)
		c.fail(http.StatusUnauthorized, "the burst API needs a bearer token: send Authorization: Bearer <the token in --web.burst-api.token-file>")
		return false
	}
	// Comparing hashes keeps the comparison constant-time whatever the
	// length of the token presented.
	got := sha256.Sum256([]byte(strings.TrimSpace(token)))
	if subtle.ConstantTimeCompare(got[:], a.tokenHash[:]) != 1 {
		c.w.Header().Set("WWW-Authenticate", `Bearer realm="inferprobe burst API", error="invalid_token"`)
		c.fail(http.StatusUnauthorized, "wrong bearer token; send the token in --web.burst-api.token-file")
		return false
	}
	c.principal = "bearer"
	return true
}

// trigger starts a run of the burst c.burst.
func (a *burstAPI) trigger(c *call) {
	o, err := decodeOverrides(c.w, c.r)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			c.fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes; send only the overrides (duration, requests, rate, concurrency)", maxBurstBody))
			return
		}
		c.fail(http.StatusBadRequest, "bad overrides: "+err.Error()+`; send e.g. {"duration":"30s","requests":100,"rate":5,"concurrency":8}, every field optional`)
		return
	}
	run, wait, err := a.triggerLimited(c.burst, o)
	if wait > 0 {
		c.w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		c.fail(http.StatusTooManyRequests, fmt.Sprintf("too many bursts triggered: at most %d at once, then one per %s (--web.burst-api.rate-limit); retry in %s",
			TriggerBurst, a.opts.TriggerInterval, wait.Round(time.Second)))
		return
	}
	if err != nil {
		a.controlError(c, err)
		return
	}
	c.run = run.ID
	location := runsPath + "/" + url.PathEscape(run.ID)
	c.w.Header().Set("Location", location)
	answer := map[string]any{"id": run.ID, "status_url": location}
	if len(run.Adjusted) > 0 {
		answer["adjusted"] = run.Adjusted
	}
	c.json(http.StatusAccepted, answer)
}

// triggerLimited starts a run if the rate limit allows one now, else says
// how long to wait. Only runs that start spend the limit: a refused trigger,
// or a run that failed to start (overrides that cannot apply), loads
// nothing. Triggers are serialized so that the check and the spending of a
// token cannot interleave.
func (a *burstAPI) triggerLimited(name string, o BurstOverrides) (RunInfo, time.Duration, error) {
	a.triggerMu.Lock()
	defer a.triggerMu.Unlock()
	if tokens := a.limiter.Tokens(); tokens < 1 {
		return RunInfo{}, time.Duration((1 - tokens) * float64(a.opts.TriggerInterval)), nil
	}
	run, err := a.ctl.TriggerBurst(name, o)
	if err == nil && run.State != RunFailed { // a run that failed to start sent nothing
		a.limiter.Allow() // the token checked above
	}
	return run, 0, err
}

// run shows (GET) or cancels (DELETE) the run c.run.
func (a *burstAPI) run(c *call) {
	if c.r.Method == http.MethodDelete {
		run, err := a.ctl.CancelBurst(c.run)
		if err != nil {
			a.controlError(c, err)
			return
		}
		c.json(http.StatusOK, run)
		return
	}
	run, ok := a.ctl.BurstRun(c.run)
	if !ok {
		a.controlError(c, ErrUnknownRun)
		return
	}
	c.json(http.StatusOK, run)
}

// artifacts lists the artifacts of the run c.run.
func (a *burstAPI) artifacts(c *call) {
	names, err := a.ctl.BurstArtifacts(c.run)
	if err != nil {
		a.controlError(c, err)
		return
	}
	base := runsPath + "/" + url.PathEscape(c.run)
	files := make([]map[string]string, len(names))
	for i, n := range names {
		files[i] = map[string]string{"name": n, "url": base + "/artifacts/" + url.PathEscape(n)}
	}
	c.json(http.StatusOK, map[string]any{"report_url": base + "/report.html", "files": files})
}

// artifact serves the file name of the run c.run's artifacts. The report is a page of this
// origin, so it may run nothing and load nothing (it needs neither).
func (a *burstAPI) artifact(c *call, name string) {
	f, err := a.ctl.BurstArtifact(c.run, name)
	if err != nil {
		a.controlError(c, err)
		return
	}
	defer f.Close()
	h := c.w.Header()
	h.Set("Content-Type", artifactType(name))
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	if name != "report.html" {
		h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
	}
	c.status = http.StatusOK
	http.ServeContent(c.w, c.r, name, f.Modified, f.Content)
}

// artifactType is the media type of an artifact, by its extension.
func artifactType(name string) string {
	switch {
	case strings.HasSuffix(name, ".html"):
		return "text/html; charset=utf-8"
	case strings.HasSuffix(name, ".jsonl"):
		return "application/jsonl"
	case strings.HasSuffix(name, ".json"):
		return "application/json"
	case strings.HasSuffix(name, ".csv"):
		return "text/csv; charset=utf-8"
	}
	return "application/octet-stream"
}

// controlError answers an error of the burst controls with its status code.
func (a *burstAPI) controlError(c *call, err error) {
	var busy *BusyError
	switch {
	case errors.As(err, &busy):
		c.json(http.StatusConflict, map[string]string{"error": err.Error(), "running": busy.RunID,
			"status_url": runsPath + "/" + url.PathEscape(busy.RunID)})
	case errors.Is(err, ErrUnknownBurst):
		c.fail(http.StatusNotFound, fmt.Sprintf("no burst named %q is configured; GET %s lists them", c.burst, burstAPIPath))
	case errors.Is(err, ErrNotOnDemand):
		c.fail(http.StatusForbidden, err.Error())
	case errors.Is(err, ErrNoArtifact):
		c.fail(http.StatusNotFound, fmt.Sprintf("run %q has no such artifact; GET %s/%s/artifacts lists them (a search, a run that failed to start, a share of a cluster run and runs whose artifacts no longer fit in memory have none)", c.run, runsPath, url.PathEscape(c.run)))
	case errors.Is(err, ErrUnknownRun):
		c.fail(http.StatusNotFound, fmt.Sprintf("no run %q is running or kept in the history; GET %s lists them", c.run, runsPath))
	case errors.Is(err, ErrRunFinished):
		c.fail(http.StatusConflict, fmt.Sprintf("run %q has already finished; nothing to cancel", c.run))
	case errors.Is(err, errCluster):
		c.fail(http.StatusServiceUnavailable, err.Error())
	case errors.Is(err, errShuttingDown):
		c.fail(http.StatusServiceUnavailable, err.Error())
	default:
		a.logger.Error("burst API: unexpected error", "err", err)
		c.fail(http.StatusInternalServerError, err.Error()+"; see the inferprobe log")
	}
}

// overridesBody is the wire form of BurstOverrides: the duration as text,
// and each field a pointer, so that a zero written is told from one left out.
type overridesBody struct {
	Duration    *string  `json:"duration"`
	Requests    *uint64  `json:"requests"`
	Rate        *float64 `json:"rate"`
	Concurrency *int     `json:"concurrency"`
}

// keepConfigured ends the message of an override that cannot mean anything.
const keepConfigured = "; leave it out to keep the burst's own"

// decodeOverrides reads the optional JSON body of a trigger and checks each
// value against its bound; the burst manager lowers a value above the
// burst's max to it, and says so in the run.
func decodeOverrides(w http.ResponseWriter, r *http.Request) (BurstOverrides, error) {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBurstBody))
	dec.DisallowUnknownFields()
	var body overridesBody
	if err := dec.Decode(&body); err == io.EOF {
		return BurstOverrides{}, nil // no body: the burst as configured
	} else if err != nil {
		return BurstOverrides{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return BurstOverrides{}, err
		}
		return BurstOverrides{}, errors.New("more than one JSON value in the body")
	}
	var o BurstOverrides
	if body.Duration != nil {
		d, err := time.ParseDuration(*body.Duration)
		switch {
		case err != nil:
			return o, fmt.Errorf("duration: %w", err)
		case d <= 0:
			return o, fmt.Errorf("duration %s: must be > 0%s", *body.Duration, keepConfigured)
		}
		if err := scenarios.DurationBound.Check("duration", float64(d)); err != nil {
			return o, err
		}
		o.Duration = d
	}
	if body.Requests != nil {
		if *body.Requests < 1 {
			return o, fmt.Errorf("requests 0: must be ≥ 1%s", keepConfigured)
		}
		if err := scenarios.RequestBound.Check("requests", float64(*body.Requests)); err != nil {
			return o, err
		}
		o.Requests = *body.Requests
	}
	if body.Rate != nil {
		if !(*body.Rate > 0) {
			return o, fmt.Errorf("rate %v: must be > 0%s", *body.Rate, keepConfigured)
		}
		if err := scenarios.RateBound.Check("rate", *body.Rate); err != nil {
			return o, err
		}
		o.Rate = *body.Rate
	}
	if body.Concurrency != nil {
		if *body.Concurrency < 1 {
			return o, fmt.Errorf("concurrency %d: must be ≥ 1%s", *body.Concurrency, keepConfigured)
		}
		if err := scenarios.ConcurrencyBound.Check("concurrency", float64(*body.Concurrency)); err != nil {
			return o, err
		}
		o.Concurrency = *body.Concurrency
	}
	return o, nil
}

// allow answers 405 unless the request's method is one of methods.
func (c *call) allow(methods ...string) bool {
	for _, m := range methods {
		if c.r.Method == m {
			return true
		}
	}
	allowed := strings.Join(methods, ", ")
	c.w.Header().Set("Allow", allowed)
	c.fail(http.StatusMethodNotAllowed, "method "+c.r.Method+" not allowed here; use "+allowed)
	return false
}

func (c *call) fail(status int, msg string) {
	c.json(status, map[string]string{"error": msg})
}

func (c *call) json(status int, v any) {
	c.status = status
	c.w.Header().Set("Content-Type", "application/json")
	c.w.Header().Set("Cache-Control", "no-store")
	c.w.WriteHeader(status)
	enc := json.NewEncoder(c.w)
	enc.SetEscapeHTML(false) // a JSON API, not a page: "must be > 0" reads as written
	_ = enc.Encode(v)
}

// isSegment reports whether s is one non-empty path segment.
func isSegment(s string) bool { return s != "" && !strings.Contains(s, "/") }

// nonNil makes an empty list encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
