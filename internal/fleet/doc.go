// Package fleet rolls a fleet of clusters to their versions through an ops
// plugin: the ClusterVersion resource's logic, without IO.
//
// Decide is pure: from the spec (Compile), the status as last recorded and
// what the controller just read from the plugin (Observed), it returns the
// status to record, the plugin calls to make, the events to emit and what
// it still needs to read. The controller observes, decides, calls, records
// (Started, CallRefused) and saves; a killed controller finds every
// operation in flight in the status and asks about it instead of starting
// another.
//
// Per cluster, in the multicluster upgrade operator's order: service out
// (only while the other clusters serving number at least
// requiredAvailableCount), control plane, node pools one by one, wait until
// available, spec.member (a plan and health checks run on the cluster by
// the controller's MemberDriver, followed as one more operation), service
// in. Waves run in order; after each, a soak in which a
// cluster that stops serving counts as a failure, then an approval. A failed
// operation halts the rollout or, with onFailure Revert, takes the clusters
// this rollout changed back to their recorded versions, last first.
package fleet
