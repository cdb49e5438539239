// Package source turns a step's Source (a file or directory, a URL,
// inline YAML, or a ConfigMap or Secret of the plan's namespace) into
// bytes, and bytes into Kubernetes objects.
//
// The story: a plan names where its CRDs and manifests come from; before a
// stage starts, the engine reads each source once, keeps its Digest (so a
// resumed run can tell whether the source changed under it) and Decodes it
// into the objects the executors apply. The package holds no cluster
// client: ConfigMaps and Secrets are read through the Objects interface
// the caller gives (the runner's, with the credentials the plan acts
// with), so without one such sources are an error and everything else
// still reads. Decoding is pure and checks only what every applied object
// needs (apiVersion, kind, metadata.name), so a broken file fails before
// anything changes in the cluster; content read from a Secret is decoded
// with DecodeSecret, whose errors never quote it.
package source
