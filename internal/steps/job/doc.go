// Package job is the `job` step: run one Kubernetes Job (a database
// migration, say) to completion, and on rollback its rollbackJob (the
// down-migration).
//
// The Job's name and the run attempt that created it are its identity: the
// step marks its Job with the run's name and attempt (annotations
// upshift.dev/run and upshift.dev/run-attempt). Run is idempotent within an
// attempt: a Job of this attempt that already completed is a success and is
// not run again, so a resumed run never applies a migration twice; one that
// failed stays failed until an operator deletes it; one still running is
// waited for. A Job an earlier attempt left (apply --retry after a rollback
// that ran the down-migration) is deleted and run again: its work was
// undone. The same holds for the rollbackJob, so the rollback of attempt N
// runs attempt N's down-migration, and a rollback never takes a
// down-migration it did not run for its own. A Job of the same name that
// another run created is refused, naming that run: its rollback may have
// undone the migration, so its completion proves nothing; a Job made by
// hand counts as a migration someone already ran.
//
// The attempt is kept in annotations rather than in the Job's name
// (migrate-2 for attempt 2): users name their migrations, and
// `kubectl logs job/NAME`, dashboards and alerts keyed by that name keep
// working across attempts. The cost is a delete before a new attempt's
// Job, which also removes the old pods, so only one attempt's pods exist. Because a Job's pod template
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
