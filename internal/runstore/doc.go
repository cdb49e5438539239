// Package runstore keeps UpgradeRun records in the target cluster, so any
// process on any machine can resume, roll back or report a run.
//
// Each run is one Secret "upshift-run-<run>" of type "upshift.dev/run" in
// one namespace (the CLI uses "upshift-system"). A Secret, not a ConfigMap:
// next to the run ("run.json") it keeps the plan's resolved source contents
// ("sources.json.gz", gzip-compressed), and those may hold Secret manifests.
// Labels (upshift.dev/run, app.kubernetes.io/managed-by) and annotations
// (phase, plan version) let `kubectl get secret -l upshift.dev/run
// --show-labels` and `kubectl describe` say what a record is; no content of
// a run or its sources ever goes into labels or annotations.
//
// Writes use optimistic concurrency: Save takes the run's ResourceVersion
// as a precondition and returns ErrConflict when another process wrote the
// run since it was read. Saving sources changes the Secret but not the run,
// so it does not make a run read before it stale (see Save).
//
// Transient API errors (connection refused, 5xx, throttling) are retried
// with backoff inside every call; a conflict or a missing run is returned
// at once.
package runstore
