# Upshift: build, test, demo, lint.
# `make test` runs unit and integration tests against a real local control
# plane; the first run builds its binaries (about 9 minutes on 2 cores).

GO        ?= go
BIN       := bin/upshift
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X github.com/upshift-dev/upshift/internal/version.Version=$(VERSION)
STATICCHECK_VERSION := v0.8.2
# controller-gen of the Kubernetes libraries this module uses (k8s.io/* v0.34).
# api/v1alpha1's TestCommittedFilesAreGenerated reads the version from here.
CONTROLLER_GEN_VERSION := v0.19.0
CONTROLLER_GEN := $(GO) run sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
# Test clusters live in directories named upshift-test-*: after the tests
# no process may still mention one.
TEST_CLUSTER_MARK := upshift-test-
GOTEST_FLAGS ?= -count=1 -timeout 30m

# The container image (make image): an OCI layout tar, built without Docker
# or a registry by hack/image; the same sources make the same digest.
IMAGE_TAR  ?= bin/upshift-image.tar
IMAGE_BIN  ?= bin/image/upshift
IMAGE_REPO ?= ghcr.io/upshift-dev/upshift
IMAGE_ARCH ?= $(shell $(GO) env GOARCH)
# Every timestamp in the image: the last commit's time.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
REVISION  ?= $(shell git rev-parse HEAD 2>/dev/null)

.PHONY: all build test fuzz fuzz-short unit cluster-binaries controller-gen generate proto check-leaks demo demo-ui bench bench-fleet bench-apps lint recipes clean image

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/upshift

# Build the local control plane once up front, with visible progress, so
# the parallel test packages do not all wait on it silently.
# A static binary (no cgo, no paths or build ID of this machine) in one
# layer on an empty image, run as user 65532: see hack/image.
image:
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) $(GO) build -trimpath -buildvcs=false \
		-ldflags '$(LDFLAGS) -s -w -buildid=' -o $(IMAGE_BIN) ./cmd/upshift
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(GO) run ./hack/image -binary $(IMAGE_BIN) \
		-version $(VERSION) -revision '$(REVISION)' -arch $(IMAGE_ARCH) -repository $(IMAGE_REPO) -out $(IMAGE_TAR)

cluster-binaries: build
	$(BIN) cluster build

test: cluster-binaries controller-gen
	$(GO) test $(GOTEST_FLAGS) ./...
	@$(MAKE) --no-print-directory check-leaks
	@$(MAKE) --no-print-directory fuzz-short

# Fuzzing (docs/reliability.md): hack/fuzz.sh lists the targets and runs
# them one at a time, each for FUZZTIME with one worker. 60 s per target
# is about 10 minutes in all; 10 million executions per target needs far
# longer (docs/reliability.md gives the rate measured for each), e.g.
# `make fuzz FUZZTIME=2h` or `hack/fuzz.sh 2h FuzzUntrusted`.
FUZZTIME ?= 60s
fuzz:
	GO=$(GO) ./hack/fuzz.sh $(FUZZTIME)

# Inside make test: `go test ./...` above already runs every target on its
# committed corpus (f.Add seeds and testdata/fuzz/FuzzX) without mutating;
# this runs each for FUZZSHORT with mutation too. Decision: 3 s each, so
# the nine targets cost about 30 s of fuzzing plus the instrumented
# builds (about 2 minutes on 2 cores the first time, cached after), well
# inside CI's budget (~25 of 90 minutes), one worker so the other core
# stays free.
FUZZSHORT ?= 3s
fuzz-short:
	GO=$(GO) ./hack/fuzz.sh $(FUZZSHORT)

# Pure-logic tests only (no cluster).
unit: controller-gen
	$(GO) test -count=1 -short ./...

check-leaks:
	@left=$$(pgrep -af '$(TEST_CLUSTER_MARK)' | grep -v pgrep || true); \
	if [ -n "$$left" ]; then echo "control-plane processes of test clusters are still running:"; echo "$$left"; exit 1; fi; \
	echo "no test cluster process left behind"

# Deepcopy functions and CRDs from the kubebuilder markers in api/, and
# the same CRDs in the Helm chart. Commit the result: tests fail when it
# differs from a fresh generation, or the chart's CRDs from config's.
generate:
	$(CONTROLLER_GEN) object crd paths=./api/... output:crd:dir=config/crd/bases
	$(GO) run ./hack/crddigest config/crd/bases/*.yaml
	rm -f charts/upshift/crds/*.yaml
	cp config/crd/bases/*.yaml charts/upshift/crds/

# The plugin protocol's Go code (pkg/pluginsdk/gen) from its .proto files,
# with protoc and the generators pinned in hack/gen-proto.sh. Commit the
# result: nothing else needs protoc.
proto:
	./hack/gen-proto.sh

# Fetch and build the pinned controller-gen, so the generated-files test
# (which runs it without network) finds it in the module cache.
controller-gen:
	@$(CONTROLLER_GEN) --version

# PROFILE=embedded-cluster CRDS=FILE for embedded-cluster's (README).
demo: build
	$(BIN) demo $(if $(UI),--ui) $(if $(PROFILE),--profile $(PROFILE)) $(if $(CRDS),--crds $(CRDS))

# the demo in the web UI: `upshift demo --ui` (same as make demo UI=1).
demo-ui: build
	$(BIN) demo --ui

# Upshift against the runbook scripts (test/bench), alternating, on fresh
# local clusters: the demo and the Liqo-shaped scenario, about 9 minutes.
# BENCH_FLAGS="-runs=9" for more runs, "-scenario=liqo" (or demo) for one.
BENCH_FLAGS ?= -runs=5
bench: cluster-binaries bench-fleet
	$(GO) test -tags bench -count=1 -timeout 60m -v -run TestUpgradeVersusScript ./test/bench/ -args $(BENCH_FLAGS)

# A fleet of 400 sim clusters (the most a ClusterVersion holds) in two
# waves, rolled by the controller:
# wall time against the least the availability budget allows, the
# controller's peak RSS, plugin calls per cluster (about 2 minutes).
# FLEET_FLAGS="-clusters=200 -required=180" and so on.
FLEET_FLAGS ?=
# AppRollouts at scale: 10,000 in one controller (APPS_FLAGS="-rollouts
# 2000" for a quicker look); the figures go in docs/benchmarks.md.
bench-apps: cluster-binaries
	$(GO) test -tags bench -count=1 -timeout 60m -v -run TestAppsAtScale ./test/bench/apps/ -args $(APPS_FLAGS)

bench-fleet: cluster-binaries
	$(GO) test -tags bench -count=1 -timeout 30m -v -run TestFleetAtScale ./test/bench/fleet/ -args $(FLEET_FLAGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags bench ./test/bench/...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) -tags bench ./test/bench/...

# Regenerate the embedded build recipes of the local control plane.
recipes:
	./hack/recipes.sh

clean:
	rm -rf bin
