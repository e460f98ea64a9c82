# inferprobe: `make demo` runs the demo, `make ci` sets up and runs every check.
GO      ?= go
BINARY  ?= inferprobe
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo unknown)
REV     ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/prometheus/common/version.Version=$(VERSION) \
           -X github.com/prometheus/common/version.Revision=$(REV) \
           -X github.com/prometheus/common/version.Branch=main
FUZZTIME ?= 20s
LOADER_FUZZTIME ?= 8s
# go-nvml binds every NVML call, deprecated ones included: without this a cold
# cgo build prints hundreds of -Wdeprecated-declarations warnings.
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations

.PHONY: all build demo deps tools lint test fuzz ci clean bench-lag

all: build

# The release build (.goreleaser.yaml) and the Dockerfile build with the same flags.
build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BINARY) ./cmd/inferprobe

demo: build
	./$(BINARY) demo

# bench-lag: bench's schedule lag at 200 requests/s against the default simulator, 3 rounds
# (BENCHMARKS.md, "Schedule lag in bench itself"); BASE=<git revision> runs that revision's
# binary too, back to back with this one in each round.
bench-lag: build
	@set -e; bins=./$(BINARY); \
	if [ -n "$(BASE)" ]; then d=$$(mktemp -d); git archive $(BASE) | tar -x -C $$d; \
	  (cd $$d && $(GO) build -o inferprobe-base ./cmd/inferprobe); bins="$$bins $$d/inferprobe-base"; fi; \
	loadbench/benchlag.sh 3 $$bins

# deps installs what the end-to-end tests run against: Debian's Prometheus (2.42) and
# Alertmanager (for the alerting test, with Prometheus 3.16 from `make tools`).
deps:
	@pkgs=; command -v prometheus >/dev/null 2>&1 || pkgs="$$pkgs prometheus"; \
	  command -v alertmanager >/dev/null 2>&1 || command -v prometheus-alertmanager >/dev/null 2>&1 || \
	    pkgs="$$pkgs prometheus-alertmanager"; \
	  [ -z "$$pkgs" ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y -qq --no-install-recommends $$pkgs >/dev/null; }
	@prometheus --version 2>&1 | head -1
	@$$(command -v alertmanager || command -v prometheus-alertmanager) --version 2>&1 | head -1

# tools builds Prometheus 3.16's promtool (alerts/: `promtool test rules` with native-histogram
# series; Debian's 2.42 cannot) and server (e2e alerting test: scrape_native_histograms) into
# .cache/bin; one go install of both shares the build. About 9 minutes cold on 2 cores; a no-op
# once both binaries are of PROMETHEUS_VERSION.
PROMETHEUS_VERSION ?= v0.316.0
PROMETHEUS_CMDS    := promtool prometheus
tools:
	@( for c in $(PROMETHEUS_CMDS); do \
	    $(GO) version -m .cache/bin/$$c 2>/dev/null | \
	      grep -qE 'mod[[:space:]]+github.com/prometheus/prometheus[[:space:]]+$(subst .,\.,$(PROMETHEUS_VERSION))[[:space:]]' || exit 1; \
	  done ) || GOBIN=$(CURDIR)/.cache/bin $(GO) install $(PROMETHEUS_CMDS:%=github.com/prometheus/prometheus/cmd/%@$(PROMETHEUS_VERSION))
	@for c in $(PROMETHEUS_CMDS); do printf '%s: ' $$c; $(GO) version -m .cache/bin/$$c | grep -E '^[[:space:]]+mod[[:space:]]'; done

# realengine builds the two real llama.cpp-based OpenAI-compatible servers that the end-to-end
# tests in e2e/realengine_test.go run against, from one compile of the llama.cpp that
# llama-cpp-python vendors (its source package on PyPI, kept in .cache/llama.cpp): llama.cpp's
# own llama-server, and llama-cpp-python's server, installed without a compile of its own (every
# package pinned in REALENGINE_REQS) into a virtual environment in .cache/realengine, where it
# runs on that build's libllama (LLAMA_CPP_LIB_PATH=.cache/llama.cpp/build/bin). It also writes
# their random-weight model there. About 8 minutes cold on 2 cores, nearly all of it the
# compile; a no-op once the build and the environment are newer than the pins and the model is
# newer than its script.
REALENGINE        := .cache/realengine
REALENGINE_REQS   := e2e/testdata/realengine/requirements.txt
LLAMA_CPP         := .cache/llama.cpp
LLAMA_CPP_PYTHON  := $(shell sed -n 's/^llama-cpp-python\[server\]==//p' $(REALENGINE_REQS))
LLAMA_CPP_SDIST   := $(LLAMA_CPP)/llama_cpp_python-$(LLAMA_CPP_PYTHON).tar.gz
LLAMA_SERVER      := $(LLAMA_CPP)/build/bin/llama-server
.PHONY: realengine
realengine: $(LLAMA_SERVER) $(REALENGINE)/model.gguf
	@$(LLAMA_SERVER) --version 2>&1 | grep -m1 version
	@LLAMA_CPP_LIB_PATH=$(LLAMA_CPP)/build/bin $(REALENGINE)/bin/python -c \
	  'import llama_cpp; print("llama-cpp-python", llama_cpp.__version__)'

$(LLAMA_CPP_SDIST):
	python3 -m pip download --quiet --disable-pip-version-check --no-deps --no-binary llama-cpp-python \
	  --dest $(LLAMA_CPP) llama-cpp-python==$(LLAMA_CPP_PYTHON)

# Shared libraries, for llama-cpp-python to load; no web UI (it would be fetched or built with
# npm), no HTTPS.
$(LLAMA_SERVER): $(LLAMA_CPP_SDIST)
	rm -rf $(LLAMA_CPP)/src && mkdir -p $(LLAMA_CPP)/src
	tar -xzf $< -C $(LLAMA_CPP)/src --strip-components=1
	( cmake -S $(LLAMA_CPP)/src/vendor/llama.cpp -B $(LLAMA_CPP)/build -DCMAKE_BUILD_TYPE=Release \
	    -DBUILD_SHARED_LIBS=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
	    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF && \
	  cmake --build $(LLAMA_CPP)/build --target llama-server --parallel $$(nproc) ) >$(LLAMA_CPP)/build.log 2>&1 || \
	  { tail -40 $(LLAMA_CPP)/build.log; echo "building llama.cpp failed; the whole log: $(LLAMA_CPP)/build.log"; exit 1; }
	touch $@

$(REALENGINE)/installed.txt: $(REALENGINE_REQS) $(LLAMA_CPP_SDIST)
	python3 -m venv --clear $(REALENGINE)
	CMAKE_ARGS="-DLLAMA_BUILD=OFF" $(REALENGINE)/bin/pip install --quiet --disable-pip-version-check \
	  --no-binary llama-cpp-python --find-links $(LLAMA_CPP) -r $(REALENGINE_REQS)
	cp $(REALENGINE_REQS) $@

$(REALENGINE)/model.gguf: e2e/testdata/realengine/make_model.py $(REALENGINE)/installed.txt
	$(REALENGINE)/bin/python e2e/testdata/realengine/make_model.py $@

# mixin regenerates what the monitoring mixin's config block (mixin/config.libsonnet) drives:
# alerts/inferprobe-rules.yml and dashboards/*.json. `go test ./mixin/ ./dashboards/` fails
# when the committed files differ from it.
.PHONY: mixin
mixin:
	$(GO) test -count=1 ./mixin/ -run TestRulesUpToDate -update
	$(GO) test -count=1 ./dashboards/ -run TestFilesUpToDate -update

# aiperf installs NVIDIA AIPerf 0.13.0 from PyPI into a virtual environment in .cache/aiperf (pip's
# download cache in .cache/pip) and Debian's Chromium, which `aiperf plot` renders its PNGs
# through: e2e/aiperf_test.go reads inferprobe's artifacts with AIPerf's own tools. A no-op once
# the environment is newer than its pin and Chromium is there.
AIPERF      := .cache/aiperf
AIPERF_REQS := e2e/testdata/aiperf/requirements.txt
.PHONY: aiperf
aiperf: $(AIPERF)/installed.txt
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	  apt-get install -y -qq --no-install-recommends chromium >/dev/null; }
	@$(AIPERF)/bin/python -c 'import importlib.metadata as m; print("aiperf", m.version("aiperf"))'
	@chromium --version 2>/dev/null | head -1

$(AIPERF)/installed.txt: $(AIPERF_REQS)
	python3 -m venv --clear $(AIPERF)
	PIP_CACHE_DIR=$(CURDIR)/.cache/pip $(AIPERF)/bin/pip install --quiet --disable-pip-version-check -r $(AIPERF_REQS)
	cp $(AIPERF_REQS) $@

# staticcheck installs Staticcheck into .cache/bin; a no-op once the binary is of
# STATICCHECK_VERSION (2026.2.2; Go 1.26 needs 2026.1 or later). About 30 s cold.
STATICCHECK_VERSION ?= v0.8.2
STATICCHECK         := $(CURDIR)/.cache/bin/staticcheck
.PHONY: staticcheck
staticcheck:
	@$(GO) version -m $(STATICCHECK) 2>/dev/null | \
	  grep -qE 'mod[[:space:]]+honnef.co/go/tools[[:space:]]+$(subst .,\.,$(STATICCHECK_VERSION))[[:space:]]' || \
	  GOBIN=$(CURDIR)/.cache/bin $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

lint: staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...

# INFERPROBE_E2E=1 turns a missing Prometheus or real engine into a failure instead of a skip.
# The e2e package alone takes about 25 minutes on 2 busy cores (AIPerf side by side, real engines).
test:
	INFERPROBE_E2E=1 $(GO) test -race -count=1 -timeout 40m ./...

# Each fuzz target runs for FUZZTIME; go test takes one target per run. .ci/fuzz retries a
# run that Go's fuzz coordinator fails at its deadline without a failing input.
fuzz:
	GO=$(GO) .ci/fuzz FuzzReader prober/sse $(FUZZTIME)
	GO=$(GO) .ci/fuzz FuzzDecode prober/wire $(FUZZTIME)
	GO=$(GO) .ci/fuzz FuzzDecodeChunk prober $(FUZZTIME)
	GO=$(GO) .ci/fuzz FuzzReadResponse prober/internal/http1 $(FUZZTIME)
	GO=$(GO) .ci/fuzz FuzzParse scenarios $(FUZZTIME)
	GO=$(GO) .ci/fuzz FuzzBuild prober $(FUZZTIME)
	@for f in SingleTurn MultiTurn ShareGPT Mooncake WekaAgentX Azure BurstGPT; do \
	  GO=$(GO) .ci/fuzz FuzzLoad$$f prober/dataset $(LOADER_FUZZTIME) || exit 1; done
	# parquet-go can allocate gigabytes on a corrupt file before it errors: one worker, briefly.
	GO=$(GO) .ci/fuzz FuzzLoadBaseten prober/dataset $(LOADER_FUZZTIME) -parallel 1

# deploy-test vets, staticchecks and tests deploy/, a module of its own so that the Kubernetes
# and Helm libraries stay out of the main one: helm lint, every manifest decoded strictly into its API type,
# the Helm chart rendered, compose, Dockerfile and systemd unit, and their flags and scenarios
# against the binary just built. About 6 minutes cold on 2 cores (Kubernetes and Helm, compiled
# for vet and the tests and type-checked again by staticcheck), 5-20 s warm.
.PHONY: deploy-test
deploy-test: build staticcheck
	cd deploy && $(GO) vet ./... && $(STATICCHECK) ./... && INFERPROBE=$(CURDIR)/$(BINARY) $(GO) test -count=1 ./...

# alert-backtest evaluates a rule file over recorded probe requests in simulated time and prints
# each alert's firings as JSON lines (alerts/README.md, "Backtest"): RULES=<rule files>
# RECORDS=<CSV or profile_export.jsonl>; CLASSIC=1 ingests as a Prometheus without native
# histograms. Only the firings go to stdout (the recipe is not echoed). A module of its own
# (alerts/backtest/), so that Prometheus's TSDB, engine and rule manager stay out of the daemon's.
.PHONY: alert-backtest backtest-test
alert-backtest:
	@test -n "$(RULES)" -a -n "$(RECORDS)" || { echo "usage: make alert-backtest RULES='FILE...' RECORDS=FILE [CLASSIC=1]" >&2; exit 2; }
	@cd alerts/backtest && $(GO) run ./cmd/alert-backtest $(foreach r,$(RULES),--rules $(abspath $(r))) --records $(abspath $(RECORDS)) \
	  $(if $(CLASSIC),--classic-only)

# backtest-test vets, staticchecks and tests alerts/backtest/, like deploy-test, and backtests the
# shipped rules against the targets the power table is held to (power.TestShippedRulesMeetTargets:
# short runs on one traffic model, a few minutes of CPU).
backtest-test: staticcheck
	cd alerts/backtest && $(GO) vet ./... && $(STATICCHECK) ./... && INFERPROBE_BACKTEST=1 $(GO) test -count=1 -timeout 30m ./...

# alert-power measures the power table of alerts/README.md ("What the alerts can see") for the
# shipped rules: every traffic model (the held-out ones too) at 0.2, 1 and 4 probes/s, four weeks
# unchanged and a week of each regression, each after a week of warm-up, and the queueing model on
# a classic-only Prometheus, and runs of several factors on the queueing model for the smallest
# regression caught, two runs at a time; then renders the tables. Hours of CPU:
# run it after changing the rules (TestPowerTable fails until it has), or set POWER_JOBS to a file
# of alert-power argument lines to measure only some rows, added to the file's others (the tables
# take a run's rows of the newest traffic.Version only, and mark those of an earlier one).
POWER       := alerts/backtest/power/testdata/power.jsonl
POWER_RATES ?= 0.2 1 4
# POWER_SWEEPS: the smallest-regression table's runs, each injecting its factors in turn.
POWER_SWEEPS := slower,--factor,1.1,--factor,1.15,--factor,1.2,--factor,1.25 \
  ttft,--factor,1.1,--factor,1.15,--factor,1.2,--factor,1.25 itl,--factor,1.1,--factor,1.15,--factor,1.2,--factor,1.25 \
  tail,--factor,1.25,--factor,1.5,--factor,3 errors,--factor,0.01,--factor,0.02,--factor,0.05
.PHONY: alert-power
alert-power:
	cd alerts/backtest && $(GO) build -o $(CURDIR)/.cache/bin/alert-power ./cmd/alert-power
	@jobs=$$(mktemp); for m in queueing heavy-tail bursty bimodal saturating; do for r in $(POWER_RATES); do 	  for k in "none --judged 672h" "slower --factor 1.3" "slower --factor 2" "tail --factor 2" "itl --factor 1.3" "errors --factor 0.1"; do 	    echo "--model $$m --rate $$r --regression $$k"; done; done; done >$$jobs; 	  for k in "none --judged 672h" "slower --factor 1.3"; do echo "--model queueing --rate 0.2 --regression $$k --classic-only"; done >>$$jobs; 	  for r in $(POWER_RATES); do for k in $(POWER_SWEEPS); do echo "--model queueing --rate $$r --judged 336h --regression $$k" | tr , ' '; done; done >>$$jobs; 	  cat $${POWER_JOBS:-$$jobs} | xargs -P 2 -L 1 .cache/bin/alert-power --rules alerts/inferprobe-rules.yml >$(POWER).new && 	  if [ -n "$$POWER_JOBS" ]; then cat $(POWER) >>$(POWER).new; fi && 	  sort -u $(POWER).new >$(POWER).sorted && mv $(POWER).sorted $(POWER) && rm -f $(POWER).new $$jobs
	cd alerts/backtest && $(GO) test -count=1 ./power -run TestPowerTable -update

# release-snapshot builds the release with GoReleaser (GORELEASER_VERSION, installed into
# .cache/bin like staticcheck; v2.18 needs Go 1.27) as a snapshot of this machine's
# architecture only (.goreleaser.yaml skips the others in snapshots), into .cache/release/dist,
# and checks that it holds an archive whose sha256 is in checksums.txt and whose binary prints
# the snapshot's version. Measured on 2 busy cores: the install about 20 minutes cold, the
# first -trimpath build 2m40s, 8 s warm.
GORELEASER_VERSION ?= v2.17.0
GORELEASER         := $(CURDIR)/.cache/bin/goreleaser
RELEASE_DIST       := .cache/release/dist
.PHONY: goreleaser release-snapshot
goreleaser:
	@$(GO) version -m $(GORELEASER) 2>/dev/null | \
	  grep -qE 'mod[[:space:]]+github.com/goreleaser/goreleaser/v2[[:space:]]+$(subst .,\.,$(GORELEASER_VERSION))[[:space:]]' || \
	  GOBIN=$(CURDIR)/.cache/bin $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)

release-snapshot: goreleaser
	$(GORELEASER) check
	$(GORELEASER) release --snapshot --clean
	cd $(RELEASE_DIST) && sha256sum --check --strict checksums.txt && ls *.tar.gz
	@tmp=$$(mktemp -d) && tar -xzf $(RELEASE_DIST)/*.tar.gz -C $$tmp inferprobe && \
	  $$tmp/inferprobe --version 2>&1 | head -1 | grep -E 'version [0-9]+\.[0-9]+\.[0-9]+-snapshot' && rm -rf $$tmp

ci: deps tools realengine aiperf lint test backtest-test deploy-test release-snapshot fuzz

clean:
	rm -f $(BINARY)
