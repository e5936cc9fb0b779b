# regatta — build, test and demo. `make help` lists the targets.
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
# Builds of one commit are identical: every date is the commit's.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
export SOURCE_DATE_EPOCH
DATE ?= $(shell date -u -d @$(SOURCE_DATE_EPOCH) +%Y-%m-%dT%H:%M:%SZ)
# Build tags of every go command make runs (hack/build-tags says why):
# exported through GOFLAGS, so tests, the bench and go run builds get them.
BUILD_TAGS := $(shell sed -e '/^\#/d' -e '/^$$/d' hack/build-tags | paste -sd, -)
GOFLAGS += -tags=$(BUILD_TAGS)
export GOFLAGS
LDFLAGS := -X github.com/regatta-dev/regatta/cmd/regatta/app.version=$(VERSION) \
           -X github.com/regatta-dev/regatta/cmd/regatta/app.commit=$(COMMIT) \
           -X github.com/regatta-dev/regatta/cmd/regatta/app.date=$(DATE)
# Release and image binaries: static, stripped of paths and debug symbols
# (debug/buildinfo stays: the SBOM is built from it).
RELEASE_BUILD := -trimpath -ldflags "-s -w $(LDFLAGS)"
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
IMAGE_PLATFORMS := linux/amd64 linux/arm64
DIST := $(CURDIR)/dist
# Packages whose tests must also pass under the race detector.
RACE_PKGS := ./render/... ./lua/... ./repo/...
TEST_TIMEOUT ?= 25m

.PHONY: help build test test-env test-unit lint deps-check bench soak-short demo clean manifests image release

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

# CGO_ENABLED=0: a static binary. kustomize imports Go's plugin package (its
# plugins are off in regatta), which with cgo makes the linker keep and export
# every method: 83 MB instead of 55 MB of loaded segments, and ~13 MiB more
# resident memory for `regatta run` (make bench, daemon phase).
build: ## build bin/regatta (static), stamped with version and commit
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/regatta ./cmd/regatta

test-env: ## install etcd and chromium (the web UI's browser tests) and build the kube-apiservers the tests start (idempotent)
	hack/setup-test-env.sh

# build first: hack/image's test builds the same static binary, which then
# only links (~20 s instead of a cold build).
test: test-env lint build ## install what the tests need, then run every test (the image and chart tests too)
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

bench: test-env build ## run the benchmark suite (~45-55 min, ~35 min more with the fleet phase at 100,500,1000 logical clusters: -phases and -fleet choose; BENCH_FLAGS=-h lists options, e.g. -flux-kustomize-controller PATH for the health phase, with -fleet-flux 100,500 also Flux in the fleet phase) and write internal/bench/REPORT.md
	GO=$(GO) $(GO) run ./internal/bench/cmd/regatta-bench -bin $(BIN) $(BENCH_FLAGS)

# The soak phase's short form (issue 54): see internal/bench/METHODS.md#soak.
SOAK_SHORT ?= -soak-clusters 100 -soak-duration 10m -soak-commit-every 20s -soak-sample-every 10s -soak-outage 1m
soak-short: test-env build ## run the soak phase's short form (100 logical clusters, 10 minutes of commits, drift, an API server restarted and one stopped, the Git host down; ~15 min; not part of make test) and write internal/bench/REPORT.md §8 (SOAK_FLAGS adds options)
	GO=$(GO) $(GO) run ./internal/bench/cmd/regatta-bench -bin $(BIN) -phases soak $(SOAK_SHORT) $(SOAK_FLAGS)

# The demo's clusters run v1.35, v1.36 and v1.37, each with its own
# controllers and scheduler (stamped per version; see hack/build-kube.sh).
DEMO_VERSIONS ?= v1.35.4 v1.36.3 v1.37.2
demo: build ## run regatta on three local clusters with the example fleet (Ctrl-C stops)
	CONTROL_PLANE_VERSIONS="$(DEMO_VERSIONS)" hack/setup-test-env.sh
	$(GO) run ./hack/demo

manifests: ## render deploy/regatta.yaml and deploy/regatta-sharded.yaml from the chart (deploy/charts/regatta)
	$(GO) run ./hack/chart manifests

# $(call cross,os/arch,dir): build regatta for one platform into dir/regatta-os-arch.
cross = CGO_ENABLED=0 GOOS=$(word 1,$(subst /, ,$(1))) GOARCH=$(word 2,$(subst /, ,$(1))) \
	$(GO) build $(RELEASE_BUILD) -o $(2)/regatta-$(subst /,-,$(1)) ./cmd/regatta

# $(call image,bindir,layout,archive): the OCI image of bindir's linux binaries.
image = $(GO) run ./hack/image -version $(VERSION) -revision $(REVISION) -created $(SOURCE_DATE_EPOCH) \
	$(foreach p,$(IMAGE_PLATFORMS),-platform $(p)=$(1)/regatta-$(subst /,-,$(p))) -out $(2) -archive $(3)

image: ## build the container image without Docker: OCI layout bin/image/oci, archive bin/image/regatta-oci.tar
	@mkdir -p $(BIN)/image
	$(foreach p,$(IMAGE_PLATFORMS),$(call cross,$(p),$(BIN)/image) &&) true
	$(call image,$(BIN)/image,$(BIN)/image/oci,$(BIN)/image/regatta-oci.tar)

release: ## VERSION=vX.Y.Z: binaries, SHA256SUMS, SBOMs, image archive, chart and manifests in dist/
	@[[ "$(VERSION)" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$$ ]] || { echo "VERSION=$(VERSION): want vX.Y.Z"; exit 1; }
	rm -rf $(DIST) $(BIN)/release-oci && mkdir -p $(DIST)
	$(foreach p,$(PLATFORMS),$(call cross,$(p),$(DIST)) && \
	  $(GO) run ./hack/sbom -version $(VERSION) $(DIST)/regatta-$(subst /,-,$(p)) > $(DIST)/regatta-$(subst /,-,$(p)).spdx.json &&) true
	$(call image,$(DIST),$(BIN)/release-oci,$(DIST)/regatta-$(VERSION)-oci.tar) > $(DIST)/regatta-$(VERSION)-oci.digest
	$(GO) run ./hack/chart package -version $(VERSION) -out $(DIST)
	$(GO) run ./hack/chart manifests -version $(VERSION) -out $(DIST)
	cd $(DIST) && sha256sum $$(ls | grep -v SHA256SUMS) > SHA256SUMS
	@cat $(DIST)/SHA256SUMS

clean: ## remove built binaries, images, dist/ and the demo (keeps the test environment's kube-apiservers)
	rm -rf $(BIN)/regatta $(BIN)/image $(BIN)/release-oci $(DIST) .demo
