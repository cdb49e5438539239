// Package recreate is the `recreate` step: delete (or annotate) the objects
// of one kind that match a label selector in the namespaces matching a
// pattern (tenant-*), and wait until they are back and Ready — re-created
// by their owner (a ReplicaSet for pods, an operator for its objects) or,
// when the step has `from` manifests, re-applied by Upshift.
//
// A resumed step must not delete again what it already re-created. The
// step tells the two apart by creation time: objects created after the
// step first started are the new ones. The start time is the run record's
// (client clock) and creationTimestamp the API server's (second
// precision); clocks that disagree by seconds can, on a resume only, make
// the step re-create an object twice or skip one it just saw created —
// both harmless, as the objects are disposable by the step's contract.
//
// Objects re-created by an owner are not in the stage's backup: restoring
// them would fight their owner, which restores them from its own spec.
// The `from` objects are, like any manifests the step applies.
package recreate
