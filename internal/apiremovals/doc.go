// Package apiremovals tells which API versions a change takes away from
// objects that use them, before the change is made: what pluto and kubent
// check, kept as pure functions so the preflight and the scan before a
// catalog hop that brings a Kubernetes minor (internal/apiscan) share
// them.
//
// Two kinds of removal:
//
//   - Kubernetes removes built-in API versions in a minor release
//     (autoscaling/v2beta2 HorizontalPodAutoscaler in 1.26). [Removed]
//     looks kinds up in a table taken from the Kubernetes deprecated API
//     migration guide. The runner's preflight applies it to the plan's
//     own objects against the cluster's version (an object of a removed
//     version is refused, naming the replacement). Before a catalog hop
//     whose release installs a new Kubernetes minor (installsKubernetes),
//     internal/apiscan applies it to the live objects: their last-applied
//     annotations and Helm releases' manifests ([Kinds] lists what to
//     look for).
//   - A new CustomResourceDefinition drops a version that the live CRD's
//     status.storedVersions still lists: objects may be stored in it, and
//     the API server refuses the update ("missing from spec.versions").
//     [DroppedStoredVersions] finds those versions; [StoredVersionDrop]
//     words the problem and its fix (a storage migration).
//
// A version the new CRD stops serving (served: false) but keeps is not a
// problem here: it is the documented step before a removal and the API
// server accepts it; which clients still read it Upshift cannot see.
package apiremovals
