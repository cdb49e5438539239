// Package steps builds the executor of a plan step: New picks the kind's
// package (crds, manifests, image) and hands it the clients of a clients.Set, which
// every executor of a run shares (one discovery cache, one RESTMapper).
//
// Each kind lives in its own package and depends on the step contract
// (internal/step) and internal/kube only, never on this registry.
package steps
