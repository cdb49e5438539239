#!/usr/bin/env bash
# The demo's 1.0.0 -> 1.1.0 upgrade as a runbook script does it: the
# CozyStack plan's `kubectl apply` / `kubectl wait` / `helm upgrade --wait`
# and the Liqo seed's `kubectl set image` / `kubectl rollout status` /
# `kubectl apply --server-side`, one command after the other. The
# benchmark times it against `upshift apply` of examples/demo/1.1.0.
# Needs KUBECONFIG, KUBECTL, HELM and DEMO (the examples/demo/1.1.0 dir).
set -euo pipefail
k() { "$KUBECTL" "$@"; }
ns=demo-system
t=5m

# crds
k apply --server-side --force-conflicts -f "$DEMO/crds/"
k wait --for=condition=Established --timeout=$t crd -l app.kubernetes.io/part-of=demo

# control-plane
k -n $ns set image deployment/demo-controller-manager manager=example.com/demo/controller-manager:1.1.0
k -n $ns rollout status deployment/demo-controller-manager --timeout=$t

# schema
k apply --server-side --force-conflicts -f "$DEMO/jobs/migrate.yaml"
k -n $ns wait --for=condition=Complete --timeout=$t job/demo-migrate-1-1-0

# addons
"$HELM" upgrade demo-addon "$DEMO/charts/demo-addon" -n $ns -f "$DEMO/addon-values.yaml" --set replicas=2 --wait --timeout $t

# data-plane
k apply --server-side --force-conflicts -f "$DEMO/templates/"
k -n $ns set image daemonset/demo-fabric fabric=example.com/demo/fabric:1.1.0
k -n $ns rollout status daemonset/demo-fabric --timeout=$t
k -n $ns set image deployment/demo-ipam ipam=example.com/demo/ipam:1.1.0
k -n $ns rollout status deployment/demo-ipam --timeout=$t
k -n $ns set image deployment/demo-proxy proxy=example.com/demo/proxy:1.1.0
k -n $ns rollout status deployment/demo-proxy --timeout=$t

# gateways: a selector cannot change in place
for tenant in demo-tenant-a demo-tenant-b; do
  k -n $tenant delete deployment -l app.kubernetes.io/component=gateway --wait=true
done
k apply --server-side --force-conflicts -f "$DEMO/gateways/"
for tenant in demo-tenant-a demo-tenant-b; do
  k -n $tenant rollout status deployment/demo-gateway --timeout=$t
done
