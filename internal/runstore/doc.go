// Package runstore keeps UpgradeRun records in the target cluster, so any
// process on any machine can resume, roll back or report a run.
//
// Each run is one Secret "upshift-run-<run>" of type "upshift.dev/run" in
// one namespace (the CLI uses "upshift-system"): the plan ("spec.json",
// written once), the run's status ("status.json") and each stage's
// ("stage-NNN.json"), so a save after a transition sends only what it
// changed. A Secret, not a ConfigMap: a plan may carry inline sources and
// Helm values. The resolved sources are written once, before the record,
// as immutable chunk Secrets of type "upshift.dev/sources" (SaveSources,
// internal/chunks) that the record names in spec.sources.
// Labels (upshift.dev/run, app.kubernetes.io/managed-by) and annotations
// (phase, plan version) let `kubectl get secret -l upshift.dev/run
// --show-labels` and `kubectl describe` say what a record is; no content of
// a run or its sources ever goes into labels or annotations.
//
// Writes use optimistic concurrency: Save takes the run's ResourceVersion
// as a precondition and returns ErrConflict when another process wrote the
// run since it was read.
//
// Transient API errors (connection refused, 5xx, throttling) are retried
// with backoff inside every call; a conflict or a missing run is returned
// at once.
package runstore
