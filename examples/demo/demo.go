// Package demo is the demo platform that `upshift demo` (and `make demo`)
// installs and upgrades: three versions, each a directory holding its
// UpgradePlan and the files the plan points at. FS embeds them so the
// binary carries the demo wherever it runs.
package demo

import "embed"

// FS holds 1.0.0/, 1.1.0/ and 2.0.0/, each with plan.yaml at its root,
// the catalog of the three (catalog.yaml), the app on top (app/) and
// the app rolled out by an AppRollout (rollout/);
// the plans' relative paths resolve inside their own directory.
//
//go:embed 1.0.0 1.1.0 2.0.0 app rollout catalog.yaml
var FS embed.FS
