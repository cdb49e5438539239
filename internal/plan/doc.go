// Package plan reads an UpgradePlan file and checks it statically before
// anything touches a cluster: every problem is reported at once, each with
// its field path and the fix.
//
// Not yet done: cluster preflight (objects exist, credentials may write),
// which comes with the engine.
package plan
