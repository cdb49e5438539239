// Package freeze is the `freeze` step: a ValidatingAdmissionPolicy and
// its binding (no webhook to run) that deny chosen operations (Liqo's new
// peerings and offloads: create of some kinds) to everyone for the rest
// of the run.
//
// Lifetime. The step's stage backup records both objects as absent, so a
// rollback of the stage deletes them. Every other end of the run
// (succeeded, failed, aborted, rolled back) lifts them through
// step.Finisher, which the runner calls before it saves the run as
// ended; a run that goes on after it ended (retry, a resumed abort) runs
// the succeeded step again. A run killed mid-way keeps its freeze: the
// run is not over, and the process that resumes it lifts it at its end.
//
// In effect means enforced. The API server loads policies through an
// informer, a moment after they are written, so the objects existing
// says nothing. The policy also matches one probe request, which
// nothing else makes: a dry-run create of a Secret named after the
// policy, in the runs namespace, as the driver (who writes Secrets there
// anyway for backups, so no right is added). Run returns once the API
// server denies the probe with this policy and binding; Finish once it
// allows it again. Review requests (SelfSubjectAccessReview) would need
// no right at all but skip validating admission, so they cannot probe.
// On a control plane of several API servers the probe proves it on the
// one that answered; the others follow within the same informer delay.
//
// Upshift itself. The policy never applies in the runs namespace (run
// records, backups, the lease), and admission policies never apply to
// admission policies, so lifting always works. Freezing what a later
// step writes would deny the run its own step or rollback: plan
// validation and the preflight refuse it.
package freeze
