// Package engine is Upshift's state machine: it decides what a run does
// next and records what happened, and does no IO of its own.
//
// The loop (driven by internal/runner) is observe, decide, act, record:
//
//	for {
//		a := engine.Next(run)            // decide from the saved status
//		if a.Kind == engine.Done { … }
//		engine.Begin(run, a, now)        // record "started"; save
//		o := act(a)                      // IO: backup, step, gate, restore
//		engine.Complete(run, a, o, now)  // record the outcome; save
//	}
//
// Every Begin and Complete is a transition that the driver saves before it
// goes on, so a process killed at any point resumes from the last saved
// transition: a step that was started and not recorded as finished is
// entered again (executors are idempotent), a succeeded step never is.
// (Drive saves several transitions in one write where nothing touches the
// platform between them: an action's end with the next one's start, and a
// quick gate's or backup's start with its end. A step of a stage whose
// backup is recorded starts while that write is in flight: a resumed run
// finds the backup in the cluster and records it first; see Actor.)
//
// Rules:
//   - A stage is backed up once per run attempt, before its first change; a
//     stage whose backup is neither recorded nor found in the cluster
//     changed nothing.
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
