#!/usr/bin/env bash
# The Liqo-shaped platform's v1.0.0 -> v1.1.0 upgrade as Liqo's runbook
# makes it, one command after the other: the CRDs, then the
# controller-manager, then every other component, each rolled out before
# the next. The benchmark times it against `upshift apply` of
# v1.1.0/plan.yaml, which makes the same changes in the same order.
# Needs KUBECONFIG, KUBECTL and LIQO (the test/bench/liqo/v1.1.0 dir).
set -euo pipefail
k() { "$KUBECTL" "$@"; }
ns=liqo
t=5m

# crds
k apply --server-side --force-conflicts -f "$LIQO/crds/"
k wait --for=condition=Established --timeout=$t crd -l app.kubernetes.io/part-of=liqo

# controller-manager, then the rest one after the other
rollout() { # kind/name container image
  k -n $ns set image "$1" "$2=$3"
  k -n $ns rollout status "$1" --timeout=$t
}
rollout deployment/liqo-controller-manager controller-manager ghcr.io/liqotech/liqo-controller-manager:v1.1.0
rollout deployment/liqo-webhook webhook ghcr.io/liqotech/webhook:v1.1.0
rollout deployment/liqo-crd-replicator crd-replicator ghcr.io/liqotech/crd-replicator:v1.1.0
rollout deployment/liqo-metric-agent metric-agent ghcr.io/liqotech/metric-agent:v1.1.0
rollout deployment/liqo-ipam ipam ghcr.io/liqotech/ipam:v1.1.0
rollout deployment/liqo-proxy proxy ghcr.io/liqotech/proxy:v1.1.0
rollout daemonset/liqo-fabric fabric ghcr.io/liqotech/fabric:v1.1.0

# gateway templates
k apply --server-side --force-conflicts -f "$LIQO/templates/"
