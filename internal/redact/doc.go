// Package redact hides secret values before text is shown or stored: in
// status, events, logs, messages and every CLI output.
//
// What is secret: the values of Secret objects (data, stringData, and
// kubectl's last-applied copy of them), Helm values (a step's values and
// the content of its values files and valuesFrom), the inline source of
// any step, the content of configMap and secret sources (a plan carries
// only their names and keys, which are shown; the content is kept in the
// run's sources, Secrets of their own, and errors about it never quote
// it: source.DecodeSecret, source.Describe), and the
// credentials a URL carries (user info and query, where tokens travel) in
// http gates, sources and Helm chart repositories, chart URLs and OCI
// references.
//
// Where it happens, in two places by design:
//
//   - Where text is produced. A message is stored in the run record, which
//     lives in the cluster and is read by anyone who may read it there (and
//     by every later driver: a controller's status, an API), so a message
//     must be clean before it is stored: sources and Helm name URLs through
//     [URL], errors that may quote a URL go through [Text] (or [Error]),
//     Helm errors go through a [Scrubber] of the step's values, and the
//     runner passes every outcome message through [Text] before the engine
//     records it.
//   - Where it is printed or stored. A plan in memory is the plan as
//     written (it is what a run executes), so every printer shows a run
//     through [Run] and a plan through [Plan], which hide the spec's
//     secrets and pass the messages through [RunStatus]'s [Text] once more
//     (records written by an older Upshift may hold raw URLs); the run
//     store writes the UpgradeRun resource with [PlanSpec] and [RunStatus]
//     too, and keeps the plan as written only in the Secrets of the run's
//     sources. Objects go through [Object], and diffs of two versions of an
//     object through [Pair].
package redact
