# regatta — build, test and demo. `make help` lists the targets.
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/regatta-dev/regatta/cmd/regatta/app.version=$(VERSION) \
           -X github.com/regatta-dev/regatta/cmd/regatta/app.commit=$(COMMIT)
# Packages whose tests must also pass under the race detector.
RACE_PKGS := ./render/... ./lua/... ./repo/...
TEST_TIMEOUT ?= 25m

.PHONY: help build test test-env test-unit lint deps-check bench demo clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

# CGO_ENABLED=0: a static binary. kustomize imports Go's plugin package (its
# plugins are off in regatta), which with cgo makes the linker keep and export
# every method: 83 MB instead of 55 MB of loaded segments, and ~13 MiB more
# resident memory for `regatta run` (make bench, daemon phase).
build: ## build bin/regatta (static), stamped with version and commit
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/regatta ./cmd/regatta

test-env: ## install etcd and build the kube-apiservers the tests start (idempotent)
	hack/setup-test-env.sh

test: test-env lint ## install what the tests need, then run every test
	REGATTA_BIN_DIR=$(BIN) $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...
	REGATTA_BIN_DIR=$(BIN) $(GO) test -count=1 -race -timeout $(TEST_TIMEOUT) $(RACE_PKGS)

test-unit: ## run the tests that need no test environment
	$(GO) test -count=1 ./spec/... ./cmd/...

lint: deps-check ## gofmt check, go vet, go.mod tidy, dependency direction
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^hack/kube/')); \
	  if [ -n "$$out" ]; then echo "not gofmt-formatted:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }

deps-check: ## leaves (spec, render, lua, repo) import no regatta package above them
	hack/check-deps.sh

bench: test-env build ## run the benchmark suite (~35-40 min; BENCH_FLAGS=-h lists options) and write bench/REPORT.md
	GO=$(GO) $(GO) run ./bench/cmd/regatta-bench -bin $(BIN) $(BENCH_FLAGS)

demo: test-env build ## run regatta on three local clusters with the example fleet (Ctrl-C stops)
	$(GO) run ./hack/demo

clean: ## remove built binaries and the demo (keeps the test environment's kube-apiservers)
	rm -rf $(BIN)/regatta .demo
