// Package apps rolls applications out: it reconciles AppRollout
// resources, each one Deployment brought to a version by a migration Job,
// a rolling update or canary steps, and rolled back to the Deployment as
// it was captured when any of it fails.
//
// A reconcile observes the rollout and what it acts on (its Deployment,
// the canary Deployment, the migration Jobs) as the rollout's
// ServiceAccount, decides one thing to do with the pure Decide, does it,
// and saves the status Decide made, locked to the version it read. Each
// saved status is a point a killed controller resumes from: the next
// reconcile decides again from it and from what it observes, and every
// act is safe to do again. A rollout that waits (a pause, a migration, a
// canary's pods) holds nothing: its reconcile returns with the time to
// look again, so ten thousand idle rollouts cost the controller only
// their place in the shared cache.
package apps
