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

.PHONY: all build test unit cluster-binaries controller-gen generate check-leaks demo bench lint recipes clean

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/upshift

# Build the local control plane once up front, with visible progress, so
# the parallel test packages do not all wait on it silently.
cluster-binaries: build
	$(BIN) cluster build

test: cluster-binaries controller-gen
	$(GO) test $(GOTEST_FLAGS) ./...
	@$(MAKE) --no-print-directory check-leaks

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
	rm -f charts/upshift/crds/*.yaml
	cp config/crd/bases/*.yaml charts/upshift/crds/

# Fetch and build the pinned controller-gen, so the generated-files test
# (which runs it without network) finds it in the module cache.
controller-gen:
	@$(CONTROLLER_GEN) --version

demo: build
	$(BIN) demo

# Upshift against the runbook scripts (test/bench), alternating, on fresh
# local clusters: the demo and the Liqo-shaped scenario, about 9 minutes.
# BENCH_FLAGS="-runs=9" for more runs, "-scenario=liqo" (or demo) for one.
BENCH_FLAGS ?= -runs=5
bench: cluster-binaries
	$(GO) test -tags bench -count=1 -timeout 60m -v -run TestUpgradeVersusScript ./test/bench/ -args $(BENCH_FLAGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# Regenerate the embedded build recipes of the local control plane.
recipes:
	./hack/recipes.sh

clean:
	rm -rf bin
