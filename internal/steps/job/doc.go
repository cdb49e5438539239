// Package job is the `job` step: run one Kubernetes Job (a database
// migration, say) to completion, and on rollback its rollbackJob (the
// down-migration).
//
// The Job's name is its identity. Run is idempotent: a Job of that name that
// already completed is a success and is not run again, so a resumed run never
// applies a migration twice; one that failed stays failed until an operator
// deletes it; one still running is waited for. Because a Job's pod template
// cannot change, an existing Job whose spec differs from the plan's is a
// failure that asks for a new Job name: reusing the name would either skip
// the new migration or fail to update it.
//
// A failure carries what the Waiter saw (the pod, container and exit code)
// and the last lines of that container's log, with the literal env values of
// the pod's spec masked. The step never reads Secrets. A Job with
// ttlSecondsAfterFinished may be deleted before a resumed run looks for it,
// and would then run again: leave it unset on migrations.
package job
