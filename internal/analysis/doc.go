// Package analysis judges metrics measured again and again during a
// rollout or a plan's stage: one engine for app rollouts' analysis and
// platform plans' metric gates, with Argo Rollouts' semantics (success
// and failure conditions, failure, inconclusive and consecutive-error
// limits, a count of measurements).
//
// It is pure: the caller measures (a provider: Prometheus, a web URL, a
// Job) and keeps the result in status; Judge turns a value into a
// measurement's verdict, Record adds it to the metric's result and judges
// the metric, Due says when the next measurement is to be taken, and
// Verdict sums the metrics up. Everything it decides is from its
// arguments, so a controller killed between two measurements resumes
// from the status it saved.
//
// Conditions are CEL, the expression language of Kubernetes' validation
// rules, over `result`. They come from tenants' resources, so they are
// compiled with a cost limit and checked to be booleans before anything
// runs (Compile), and every error names the field.
package analysis
