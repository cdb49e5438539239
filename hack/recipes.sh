#!/usr/bin/env bash
# Regenerates the embedded build recipes of the local control plane
# (internal/localcluster/recipe/<name>/go.mod.txt and go.sum.txt) from the
# pinned versions. Each recipe is its own module so the product's go.mod
# stays free of k8s.io/kubernetes.
set -euo pipefail
cd "$(dirname "$0")/.."
K8S=v1.34.4 ETCD=v3.6.8 KWOK=v0.8.0 HELM=v3.19.5
STAGING="api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api cri-client csi-translation-lib dynamic-resource-allocation endpointslice externaljwt kms kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics mount-utils pod-security-admission sample-apiserver sample-cli-plugin sample-controller"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

recipe() { # name module-path tools...
  local name=$1; shift
  mkdir -p "$work/$name"; (cd "$work/$name"
    printf 'module upshift.dev/localcluster/%s\n\ngo 1.24.0\n' "$name" > go.mod
    if [ "$name" = kubernetes ]; then
      echo "require k8s.io/kubernetes $K8S" >> go.mod
      echo "replace (" >> go.mod
      for m in $STAGING; do echo "	k8s.io/$m => k8s.io/$m v0.${K8S#v1.}" >> go.mod; done
      echo ")" >> go.mod
    fi
    # Pin each tool with its version: an unpinned `go get` of a Kubernetes
    # command jumps to a newer release whose staging modules are refused.
    go get -tool "$@")
  mkdir -p "internal/localcluster/recipe/$name"
  cp "$work/$name/go.mod" "internal/localcluster/recipe/$name/go.mod.txt"
  cp "$work/$name/go.sum" "internal/localcluster/recipe/$name/go.sum.txt"
}
recipe kubernetes k8s.io/kubernetes/cmd/kube-apiserver@$K8S k8s.io/kubernetes/cmd/kube-controller-manager@$K8S k8s.io/kubernetes/cmd/kube-scheduler@$K8S k8s.io/kubernetes/cmd/kubectl@$K8S
recipe etcd go.etcd.io/etcd/server/v3@$ETCD
recipe kwok sigs.k8s.io/kwok/cmd/kwok@$KWOK
recipe helm helm.sh/helm/v3/cmd/helm@$HELM
echo "recipes updated; the binary directory name changes with them, so the next start rebuilds"
