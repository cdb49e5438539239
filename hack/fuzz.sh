#!/usr/bin/env bash
# Runs the native Go fuzz targets one after another, each for FUZZTIME
# (Go fuzzes one target per invocation), with one worker (-parallel=1):
# the CI machines and the development ones have two cores.
#
#   hack/fuzz.sh 60s          # make fuzz
#   hack/fuzz.sh 3s           # make fuzz-short (inside make test)
#   hack/fuzz.sh 10m FuzzUntrusted   # one target
#
# A crash stops the run; Go writes the input to the package's
# testdata/fuzz/FuzzX/<hash>: commit it with the fix.
set -euo pipefail

# The targets, package and name: every parser of outside input.
TARGETS=(
	./internal/plan:FuzzDecodeValidate
	./internal/catalog:FuzzCatalog
	./internal/catalog:FuzzPlanTemplate
	./internal/catalog:FuzzDetect
	./internal/server:FuzzRequestBodies
	./internal/kubeconfig:FuzzUntrusted
	./internal/plugin:FuzzPluginAnswers
	./internal/analysis:FuzzConditions
	./internal/versions:FuzzPath
)

time=${1:-60s}
only=${2:-}
GO=${GO:-go}
# A new interesting input is minimized before fuzzing goes on; Go's 60 s
# default would spend most of a short run there.
minimize=${FUZZMINIMIZETIME:-2s}

for t in "${TARGETS[@]}"; do
	pkg=${t%%:*} name=${t##*:}
	if [[ -n $only && $name != "$only" ]]; then
		continue
	fi
	echo "== $name ($pkg, $time)"
	# -short: a package whose TestMain starts a local cluster for its
	# other tests (internal/catalog) starts none, here or in the worker.
	$GO test -short -run='^$' -fuzz="^${name}\$" -fuzztime="$time" -fuzzminimizetime="$minimize" -parallel=1 "$pkg"
done
