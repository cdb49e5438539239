// Package engine is Upshift's state machine: it decides what a run does
// next and records what happened, and does no IO of its own. Drivers
// (internal/runner for the CLI, the controller and the HTTP API) do the
// IO through an Actor and persist the record through a Saver.
//
// # The loop
//
// Next decides the actions that may start from the record; Begin records
// one as started; the Actor does it; Complete records its outcome. Driver
// runs that loop and saves the record after transitions (Saver), several
// in one write where nothing changes the platform between them.
//
// # What is durable, and when
//
// A run has three durable truths, all in the cluster:
//
//   - The run record (UpgradeRun): every transition, saved by the one
//     process that holds the run's Lease.
//   - Each stage's backup: Secrets keyed by run, attempt and stage,
//     holding the stage's objects and its Helm releases' revisions as they
//     were, the run's UID and a checksum. It is read back before the
//     backup counts as taken, so it is in the cluster whole or not at all.
//   - The Lease: who may save the record now.
//
// What may start before the transition that begins it is saved:
//
//   - A backup or a gate: they change nothing of the platform.
//   - The first steps of a stage, in the write that records its backup:
//     the backup is already in the cluster, and tells a resumed run they
//     may have started.
//   - None of these after an unsaved outcome that failed or warned.
//
// Anything else (a restore, a step of a stage without a backup, a step
// after a failure) starts only once its Begin is saved.
//
// # Why a run killed at any instant resumes safely
//
// As soon as a driver holds a saved run (before a command such as a
// rollback changes it, and before it is driven), it asks Sought which
// stages' backups may be in the cluster and not in the record, looks for
// them, and hands what it found to Reconcile. Then, whatever instant the
// process died at:
//
//   - Before a save: nothing changed the platform that the record does
//     not cover, except the first steps of a stage whose backup was
//     taken. That backup is found; Reconcile records it, those steps as
//     begun, and the stages before it as succeeded (a backup is taken only
//     after they did, and no failed or warned outcome was left unsaved).
//     Going on, the stage takes no new backup, which would hold the
//     steps' changes, and the steps are entered again; rolling back, the
//     found backup is restored and the begun steps undone.
//   - After a save: the record says where the run was. An action begun
//     and not finished is entered again; executors are idempotent (a step
//     converges on its spec, a Job runs once by name). A succeeded step is
//     never run again.
//   - During a backup's write: the step it guards has not started (it
//     starts after the read-back), so the stage is unchanged; a partial
//     backup is not found, and the stage is backed up again.
//
// The golden scripts in testdata print every transition, and
// resume-at-every-transition kills a run after every save and crashes it
// at every save (the save lost, what had started finishing its IO), then
// resumes it going on, and rolled back: going on, it must end as the
// uninterrupted one, in the plan's order, with no backup holding its
// stage's changes; rolled back, with no step's change left in place.
//
// # Rules
//
//   - A stage is backed up once per run attempt, before its first change.
//   - A failed step or blocking gate fails its stage. With autoRollback the
//     run then rolls back; without, it stops as Failed for an operator.
//   - Rollback undoes every stage that has a backup, last stage first. A
//     failed restore stops the rollback there (RollbackFailed): restoring
//     earlier stages under a later one that is still broken could only make
//     the state harder to reason about.
//   - The record and apply's decisions hold facts ("waiting for approval"),
//     never a driver's command text: a Decision names its NextAction as
//     data, and each driver (CLI, controller, HTTP API) renders its own.
package engine
