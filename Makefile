# inferprobe: `make demo` runs the demo, `make ci` sets up and runs every check.
GO      ?= go
BINARY  ?= inferprobe
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo unknown)
REV     ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/prometheus/common/version.Version=$(VERSION) \
           -X github.com/prometheus/common/version.Revision=$(REV) \
           -X github.com/prometheus/common/version.Branch=main
FUZZTIME ?= 20s
# go-nvml binds every NVML call, deprecated ones included: without this a cold
# cgo build prints hundreds of -Wdeprecated-declarations warnings.
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations

.PHONY: all build demo deps tools lint test fuzz ci clean

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BINARY) ./cmd/inferprobe

demo: build
	./$(BINARY) demo

# deps installs what the end-to-end tests run against: a real Prometheus.
deps:
	@command -v prometheus >/dev/null 2>&1 || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	  apt-get install -y -qq --no-install-recommends prometheus >/dev/null; }
	@prometheus --version 2>&1 | head -1

# tools installs Prometheus 3.16's promtool into .cache/bin for alerts/ (`promtool test rules`
# with native-histogram series); Debian's 2.42 cannot. About 8 minutes cold on 2 cores.
PROMTOOL_MODULE ?= github.com/prometheus/prometheus/cmd/promtool@v0.316.0
tools:
	@$(GO) version -m .cache/bin/promtool 2>/dev/null | grep -qE 'mod[[:space:]]+github.com/prometheus/prometheus[[:space:]]+v0\.316\.' || \
	  GOBIN=$(CURDIR)/.cache/bin $(GO) install $(PROMTOOL_MODULE)
	@$(GO) version -m .cache/bin/promtool | grep -E '^[[:space:]]+mod[[:space:]]'

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# INFERPROBE_E2E=1 turns a missing Prometheus into a failure instead of a skip.
test:
	INFERPROBE_E2E=1 $(GO) test -race -count=1 -timeout 20m ./...

# Each fuzz target runs for FUZZTIME; go test takes one target per run.
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzReader$$' -fuzztime $(FUZZTIME) ./prober/sse/
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./prober/wire/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeChunk$$' -fuzztime $(FUZZTIME) ./prober/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./scenarios/

ci: deps tools lint test fuzz

clean:
	rm -f $(BINARY)
