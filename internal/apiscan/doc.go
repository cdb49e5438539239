// Package apiscan finds the objects a cluster holds that were written in
// API versions a Kubernetes minor no longer serves: what pluto and kubent
// check before a Kubernetes upgrade, run before a catalog hop whose
// release installs a new Kubernetes minor.
//
// The API server converts what it stores, so an object applied as
// autoscaling/v2beta2 reads as autoscaling/v2 on a 1.34 cluster: the
// version it was written in survives only where a client recorded it.
// Two records are read, as kubent does:
//
//   - kubectl's last-applied-configuration annotation, whose apiVersion is
//     the one the object was applied in. Each kind of the removal table
//     (internal/apiremovals) is listed through the version the cluster
//     serves for its group or its replacement's (extensions/v1beta1
//     Deployments are apps/v1 Deployments now), metadata only: the
//     annotation is metadata. A kind the cluster serves in neither is
//     skipped: no object of it can exist.
//   - Helm releases' manifests (each deployed revision): Helm reads the
//     manifest back on the release's next upgrade or rollback, and fails
//     on a kind the cluster no longer serves.
//
// What applies the manifests (a pipeline, a GitOps repository) would fail
// on the new minor the same way; the fix is to write the replacement
// apiVersion where the manifests are kept and apply them again, or for
// Helm to upgrade the release or rewrite its record (helm mapkubeapis).
//
// The semantics are pluto's: every version removed at or before the
// target minor is reported (apiremovals.Removed(kinds, 0, minor)), not
// only those the hop removes, since an older removal found now was missed
// before. A kind that cannot be listed, or Helm releases that cannot be
// read, is a problem that blocks as a finding does: a scan that could not
// look has not found nothing.
package apiscan
