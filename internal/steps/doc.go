// Package steps builds the executor of a plan step: New picks the kind's
// package (crds, manifests, image) and hands it the clients of a clients.Set, which
// every executor of a run shares (one discovery cache, one RESTMapper).
//
// Each kind lives in its own package and depends on the step contract
// (internal/step) and internal/kube only, never on this registry. Besides
// New, the registry builds the parts of a kind that need none of the
// run's sources: NewKeeper (what a stage's backup keeps of it),
// NewReverter (what a rollback undoes of it), NewFinisher (what it lifts
// at the run's end). Only this package imports the kinds.
package steps
