// Package pvcsbound is the `pvcsBound` gate: every PersistentVolumeClaim a
// label selector matches in a namespace (all of them, when the selector is
// empty) must be Bound.
//
// The gate watches the claims with an informer and judges the whole set
// after the first complete list and after every change. It passes when the
// last claim binds; it fails at once when a claim is Lost (its volume is
// gone, and no wait brings it back) or when the first list matches nothing
// (a typo far more often than claims to come). A claim still Pending when
// the time runs out is named in the message.
package pvcsbound
