// Package manifests is the `manifests` step: server-side apply a source's
// objects (Namespaces first, then CRDs, which are waited Established, then
// the rest in source order) and wait until every one is Current by kstatus.
// The waits run in parallel, so a crash-looping Deployment fails the step as
// soon as its pod crashes, even while other objects are still rolling out.
package manifests
