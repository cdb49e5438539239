// Package crds is the `crds` step: server-side apply CustomResourceDefinitions
// (with force, so Upshift takes the fields over from whoever installed them)
// and wait until each is Established, so that the next step can create
// resources of the new kinds. minCount guards against a source that lost
// CRDs (a truncated download, a wrong directory).
package crds
