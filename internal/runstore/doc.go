// Package runstore keeps runs in the target cluster, so any process on any
// machine can resume, roll back or report a run.
//
// Each run is an UpgradeRun resource (api/v1alpha1; its CRD is generated
// into config/crd) named after the run, in one namespace (the CLI uses
// "upshift-system"), so `kubectl get upgraderuns -n upshift-system` lists
// every run, the CLI's and the controller's alike, and `kubectl wait
// --for=condition=Ready upgraderun/NAME` waits for one. EnsureCRD checks
// the CRD is installed, Established and the one this binary embeds (and
// installs it when not) before a run's first write.
//
// What is in the resource is readable by anyone who may read upgraderuns,
// so it holds no secret value: spec.plan is the plan as redacted by
// internal/redact (inline sources, Helm values and URL credentials
// hidden), status messages pass through redact as well. The plan as
// written and the resolved sources are written once, before the run, into
// immutable chunk Secrets of type "upshift.dev/sources" (SaveSources,
// internal/chunks) that spec.sources names; LoadSources reads them back,
// and only what it returns may drive or resume a run. The digests
// (spec.planDigest, spec.sourceDigests) are the caller's, of the plan as
// written.
//
// A run is created in two writes: the resource (a create ignores the
// status subresource), then its status. A run read in between, whose
// status was never written, reads as Pending with no stage: not started.
// Every later save is one JSON patch of the status subresource that sends
// only what changed since this Store last read or wrote the run, down to
// the field of a step (the whole status when it does not know),
// with observedGeneration and the kstatus conditions (internal/conditions)
// set from the rest of the status first.
//
// Writes use optimistic concurrency: the patch sets metadata.resourceVersion
// to the version the run was read at, so the API server refuses it when
// another process wrote the run since, and Save returns ErrConflict.
//
// Records of earlier versions (a Secret "upshift-run-<run>" of type
// "upshift.dev/run") are still read by Get, List and LoadSources; the
// first Save of such a run writes it as an UpgradeRun, its plan as
// written moved into new source chunks, and deletes the Secret.
// Labels (upshift.dev/run, app.kubernetes.io/managed-by) say what an
// object is; no content of a run or its sources ever goes into labels or
// annotations.
//
// Transient API errors (connection refused, 5xx, throttling) are retried
// with backoff inside every call; a conflict or a missing run is returned
// at once.
package runstore
