// Package helmx is Upshift's thin layer over the Helm v3 Go SDK: the one
// place that knows how to build a Helm action.Configuration and how to run
// the few release operations the engine needs.
//
// The story: a `helm` step (and the backup of a stage that touches Helm
// releases) must install or upgrade a release from a local chart, learn which
// revision it started from and which one it produced, roll back to a recorded
// revision, and remove a release. helmx does exactly that, with the semantics
// of `helm upgrade --install`:
//
//	c, err := helmx.New(restConfig, helmx.WithLogger(logger))
//	ch, err := helmx.Load("charts/app")          // a directory or a .tgz
//	res, err := c.InstallOrUpgrade(ctx, "app", "apps", ch, values,
//		helmx.UpgradeOptions{Wait: true, Timeout: 2 * time.Minute, RollbackOnFailure: true})
//	// res.PreviousRevision is what a rollback goes back to (0 after a fresh install).
//	err = c.Rollback(ctx, "app", "apps", res.PreviousRevision, helmx.WaitOptions{Wait: true})
//
// Choices made here, so callers need not make them again:
//
//   - Release records live in Secrets in the release's namespace (Helm's
//     default "secret" storage driver), so `helm` on the command line sees
//     the same releases.
//   - Values are declarative: an upgrade renders the chart with exactly the
//     values given (Helm's --reset-values); nothing is reused from the
//     previous revision.
//   - Waiting is Helm 3's own readiness wait (`--wait`, polled every 2 s);
//     RollbackOnFailure is Helm's `--atomic`: a failed install is uninstalled,
//     a failed upgrade is rolled back to the last good revision, and the
//     Result says so.
//   - Helm's debug log goes to a *slog.Logger at Debug level with every
//     argument that is not a scalar or an error redacted, so release values
//     and objects (which may hold secrets) are never logged.
//
// A Client is safe for concurrent use: each operation builds its own
// action.Configuration for the namespace it works in; the discovery cache and
// REST mapper are shared.
package helmx
