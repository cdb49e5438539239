// Package helm is the `helm` step: install or upgrade one release through
// the Helm SDK, wait until its objects are Current, and on failure put the
// release back on the revision it started from (or uninstall a release the
// step installed).
//
// Helm's own --wait is not used: it polls every two seconds and only
// notices a crash-looping pod at its timeout. The step waits with the
// engine's watch-based waiter instead, which reacts to each change and
// fails at the first CrashLoopBackOff or image pull error.
//
// The step is idempotent: when the latest revision already runs the same
// chart version with the same values, it does not make a new revision and
// only waits. A revision left pending by a killed run is rolled back first,
// as Helm refuses to act on a pending release.
//
// A later rollback of the plan uses RollbackTo with the revision recorded
// in the stage's backup (StartingRevision, read before the stage started).
package helm
