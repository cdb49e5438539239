// Package controller is Upshift's in-cluster driver: it reconciles
// UpgradePlan resources by driving their runs through the same runner and
// engine as the CLI, with the rights of each plan's ServiceAccount.
//
// A reconcile observes a plan (its spec, its action annotations, its run
// record and the drive this process holds for it), decides one thing to
// do with the pure Decide, does it, and writes the plan's status with the
// pure Project. Long work (a run) happens in a drive: a goroutine that
// holds the cluster's run lease, as `upshift apply` would, and wakes the
// plan's reconcile after every saved transition, so status follows the run
// without any polling requeue.
package controller
