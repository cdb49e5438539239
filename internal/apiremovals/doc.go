// Package apiremovals tells which API versions a change takes away from
// objects that use them, before the change is made: what pluto and kubent
// check, kept as pure functions so the preflight and, later, a catalog hop
// that brings a Kubernetes minor can share them.
//
// Two kinds of removal:
//
//   - Kubernetes removes built-in API versions in a minor release
//     (autoscaling/v2beta2 HorizontalPodAutoscaler in 1.26). [Removed]
//     looks kinds up in a table taken from the Kubernetes deprecated API
//     migration guide. Upshift plans do not upgrade Kubernetes itself, so
//     the runner's preflight applies it to the plan's own objects against
//     the cluster's version (an object of a removed version is refused,
//     naming the replacement). A scan of the live objects before a hop to a
//     new Kubernetes minor is not wired: no hop brings one yet.
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
