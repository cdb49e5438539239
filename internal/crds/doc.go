// Package crds installs or checks, on the cluster, the CRDs a driver
// needs: the ones config/crd embeds, as generated from api/v1alpha1.
//
// [Ensure] reads the CRD; when it is missing, or carries another digest
// than the embedded one (config/crd.AnnotationDigest: it was installed
// from other generated files), it applies the embedded CRD server-side
// (field manager "upshift", forcing ownership: the binary's CRD is the
// one its records need) and waits until the API server says Established.
// A caller that may not write CRDs gets an error wrapping ErrForbidden
// that names the permission and the fix (`upshift crds | kubectl apply
// -f -`, run by a cluster admin) before anything changed.
package crds
