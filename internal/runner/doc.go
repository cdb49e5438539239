// Package runner drives runs against a cluster for every driver (the CLI,
// the controller, the HTTP server): it preflights (internal/preflight) a
// plan resolved by internal/resolve, takes the lease, decides what
// `apply` does with the saved run (engine.DecideApply), reconciles a
// saved run with the backups found for it (reconcile.go,
// engine.Reconcile), and lets the engine's driver move the run with real
// executors, backups and a store in the cluster (the actor: actor.go,
// restore.go).
//
// One component owns a drive's stage backups (stageBackups, backups.go):
// it takes, saves, claims and finds them, keyed by run, attempt and
// stage, whichever way a snapshot was read (ahead of the first stage,
// beside the stage before, or at the stage's turn).
//
// It knows step kinds only through the contract in internal/step and the
// registry in internal/steps: what a kind keeps in its stage's backup or
// undoes in a rollback, and what it changes besides its targets, is
// asked of it (step.Keeper, step.Reverter, step.Reacher), never switched
// on here. How a run moves through this package and why a kill
// at any instant resumes safely: docs/design.md and internal/engine's
// package doc.
package runner
