// Package preflight checks a resolved plan (resolve.Plan) against the
// cluster before a run changes anything, and reports every problem at
// once, each naming its field and the fix: kinds not served (or removed,
// with their replacement), CRDs that would drop a stored version,
// missing namespaces, workloads and containers, envKept gates whose
// workload their stage's backup would not hold, freezes that would deny
// the plan's own writes, and every write the credentials may not make.
// A refusal here costs nothing; the same problem found mid-run costs a
// rollback.
//
// It reads the cluster and asks access reviews; it writes nothing else.
// Its driver (runner.Session.Preflight) gives it the clients the plan
// acts with and what only the driver knows (Deps): where runs are kept,
// how a step's executor is built, a snapshot read ahead. It does not
// import the runner.
//
// The checks of each step kind (image.go, helm.go, freeze.go,
// recreate.go, and the job's rollbackJob in preflight.go) live here and
// switch on the kind: each adds to the checker's own state (the accesses
// needed, the writes a freeze must leave alone, the reads begun up
// front), so they are preflight's, not the kind's. What only the kind
// knows, which objects a chart renders, is asked of its executor
// (step.Renderer).
package preflight
