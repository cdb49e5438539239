// Package envkept is the `envKept` gate: the environment variables of one
// container of a workload must be what they were before the stage, as the
// stage's backup holds the workload. It is Upshift's form of the Liqo
// upgrade's "critical environment variables backup" (POD_NAMESPACE,
// CLUSTER_ID, TENANT_NAMESPACE, …), captured before the controller-manager
// changes and verified after it, and after a rollback.
//
// Why a gate, and why the backup:
//
//   - A gate, not an option of the image step (keepEnv): a controller-manager
//     is upgraded by an image step as often as by a manifests or helm step,
//     and the variables must survive all three. A gate checks the result,
//     whatever step made it, and has a severity like every other check.
//   - The stage's backup, not a ConfigMap of its own: the backup already
//     holds the workload as it was before the stage changed anything,
//     checksummed and read back before the first step runs, and it is what
//     a rollback restores. A second copy could only disagree with it. So
//     the gate reads the backup through [Before] (the runner passes the
//     stage's snapshot), and needs the workload to be in it: the gate goes
//     in the stage whose steps change the workload, which preflight checks.
//   - After a rollback, the runner compares the same variables of the
//     restored workload with the same snapshot ([Verify]): the restore's own
//     comparison lets a field go uncompared when another manager took it
//     over, while the variables a plan names must hold whoever writes them.
//
// What is compared: for each variable, the entry the container sees (the
// last of that name, as the kubelet does) by its value or its valueFrom,
// whatever the order of the list. envFrom (whole ConfigMaps or Secrets) is
// not compared: it names no variable.
//
// Env values may be secrets (a token set inline), so messages name each
// variable and how it changed (value changed, removed, added, value to
// valueFrom) and never print a value. A valueFrom is printed: it names a
// Secret or ConfigMap key, or a field, not its content.
package envkept
