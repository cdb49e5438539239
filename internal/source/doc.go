// Package source turns a step's Source (a file or directory, a URL, or
// inline YAML) into bytes, and bytes into Kubernetes objects.
//
// The story: a plan names where its CRDs and manifests come from; before a
// stage starts, the engine reads each source once, keeps its Digest (so a
// resumed run can tell whether the source changed under it) and Decodes it
// into the objects the executors apply. Reading does no Kubernetes IO;
// decoding is pure and checks only what every applied object needs
// (apiVersion, kind, metadata.name), so a broken file fails before anything
// changes in the cluster.
package source
