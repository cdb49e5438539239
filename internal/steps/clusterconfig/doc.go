// Package clusterconfig is the clusterConfig step kind: k0s's
// ClusterConfig (kube-system/k0s) brought to a release's images and its
// vendor's and end user's overrides, as embedded-cluster does after the
// k0s upgrade.
//
// The new spec is the live one with the images merged in, then each
// override merged over the result (RFC 7386 JSON merge patches: a null
// removes a field). A new pause image is written first, on its own, as
// embedded-cluster writes it before the rest. Each write is an update at
// the resourceVersion just read, so a change k0s made in between is never
// overwritten: the step reads again and merges again. Run again on a
// ClusterConfig already as the plan says, it writes nothing.
//
// The ClusterConfig is the step's target: the stage's backup holds it as
// it was, and a rollback restores it like any object.
package clusterconfig
