package helmx

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/postrender"
	"helm.sh/helm/v3/pkg/release"
)

// DefaultTimeout bounds waits and hooks when an operation sets no Timeout,
// as the helm CLI's --timeout default does.
const DefaultTimeout = 5 * time.Minute

// Status is a release revision's status: "deployed", "failed",
// "superseded", "pending-upgrade", … (Helm's release.Status).
type Status = release.Status

// The statuses callers compare against most often.
const (
	StatusDeployed        = release.StatusDeployed
	StatusFailed          = release.StatusFailed
	StatusSuperseded      = release.StatusSuperseded
	StatusUninstalled     = release.StatusUninstalled
	StatusPendingInstall  = release.StatusPendingInstall
	StatusPendingUpgrade  = release.StatusPendingUpgrade
	StatusPendingRollback = release.StatusPendingRollback
)

// ReleaseInfo describes one revision of a release.
type ReleaseInfo struct {
	Name         string
	Namespace    string
	Revision     int
	Status       Status
	Description  string // Helm's note on the revision, e.g. "Upgrade complete" or the failure
	Chart        string // chart name
	ChartVersion string
	AppVersion   string
	Updated      time.Time
}

func infoOf(r *release.Release) ReleaseInfo {
	ri := ReleaseInfo{Name: r.Name, Namespace: r.Namespace, Revision: r.Version}
	if r.Info != nil {
		ri.Status = r.Info.Status
		ri.Description = r.Info.Description
		ri.Updated = r.Info.LastDeployed.Time
	}
	if r.Chart != nil && r.Chart.Metadata != nil {
		ri.Chart = r.Chart.Metadata.Name
		ri.ChartVersion = r.Chart.Metadata.Version
		ri.AppVersion = r.Chart.Metadata.AppVersion
	}
	return ri
}

// UpgradeOptions tune InstallOrUpgrade.
type UpgradeOptions struct {
	// Wait makes the operation wait until the release's Deployments,
	// StatefulSets, DaemonSets, Services, PVCs … are ready (Helm's --wait).
	Wait bool
	// Timeout bounds the wait and each hook; 0 means DefaultTimeout. A
	// context deadline that comes sooner wins. With RollbackOnFailure the
	// rollback gets its own Timeout, so a failure can take twice as long.
	Timeout time.Duration
	// RollbackOnFailure is Helm's --atomic (and implies Wait): a failed
	// install is uninstalled, a failed upgrade is rolled back to the last
	// deployed revision, which makes a new revision.
	RollbackOnFailure bool
	// CreateNamespace creates the namespace on install when it is missing.
	CreateNamespace bool
	// SkipSchemaValidation skips Helm's check of the rendered objects
	// against the cluster's OpenAPI schemas. On an API server that
	// validates fields itself (every Kubernetes since 1.27) the check only
	// downloads the OpenAPI documents to learn so; the API server still
	// validates each write.
	SkipSchemaValidation bool
	// PostRenderer, when set, edits the rendered manifests before they are
	// sent to the cluster (e.g. to leave out webhook configurations on the
	// local cluster).
	PostRenderer postrender.PostRenderer
}

// WaitOptions tune Rollback and Uninstall.
type WaitOptions struct {
	// Wait makes Rollback wait until the resources are ready, and Uninstall
	// until they are gone.
	Wait bool
	// Timeout bounds the wait and hooks; 0 means DefaultTimeout. A context
	// deadline that comes sooner wins.
	Timeout time.Duration
	// KeepHistory makes Uninstall keep the release's revisions (helm
	// uninstall --keep-history), so Rollback can bring it back.
	KeepHistory bool
}

// Result is what InstallOrUpgrade did. It is filled in on failure too.
type Result struct {
	// Revision is the release's latest revision once the operation is over:
	// the new revision on success, the failed one without RollbackOnFailure,
	// the rollback's revision after a rolled-back upgrade, and 0 after a
	// rolled-back (hence uninstalled) install.
	Revision int
	// Status is Revision's status ("" when Revision is 0).
	Status Status
	// PreviousRevision is the revision the operation started from: the
	// deployed revision (or, if none is deployed, the latest one); 0 when the
	// release was installed. It is the revision to roll back to.
	PreviousRevision int
	// Installed is true when the release did not exist (or was uninstalled)
	// and was installed rather than upgraded.
	Installed bool
	// FailedRevision is the revision that failed, 0 on success or when the
	// operation failed before it recorded a revision (e.g. a template error).
	FailedRevision int
	// RolledBack is true when the operation failed and RollbackOnFailure
	// undid it: the release is back on PreviousRevision's content (as
	// Revision) or, for an install, removed.
	RolledBack bool
	// Duration is how long the operation took, rollback included.
	Duration time.Duration
}

// InstallOrUpgrade is `helm upgrade --install`: it installs the chart as
// release in namespace when the release has no history (or only an
// uninstalled one), and upgrades it otherwise. Values are used as given
// (--reset-values): nothing is carried over from the previous revision.
//
// It refuses, with ErrOperationInProgress, a release whose latest revision is
// pending. On failure the Result still tells which revision failed and where
// the release stands.
func (c *Client) InstallOrUpgrade(ctx context.Context, name, namespace string, ch *Chart, values map[string]any, opts UpgradeOptions) (Result, error) {
	start := time.Now()
	var res Result
	if ch == nil {
		return res, fmt.Errorf("helm install or upgrade %s/%s: no chart", namespace, name)
	}
	timeout, err := effectiveTimeout(ctx, opts.Timeout)
	if err != nil {
		return res, fmt.Errorf("helm install or upgrade %s/%s: %w", namespace, name, err)
	}
	cfg, err := c.ActionConfig(namespace)
	if err != nil {
		return res, err
	}
	hist, err := history(cfg, name)
	if err != nil && !errors.Is(err, ErrReleaseNotFound) {
		return res, fmt.Errorf("helm history %s/%s: %w", namespace, name, err)
	}
	if n := len(hist); n > 0 && hist[n-1].Info.Status.IsPending() {
		return res, fmt.Errorf("helm install or upgrade %s/%s: revision %d is %s: %w",
			namespace, name, hist[n-1].Version, hist[n-1].Info.Status, ErrOperationInProgress)
	}

	var rel *release.Release
	var runErr error
	verb := "upgrade"
	if n := len(hist); n == 0 || hist[n-1].Info.Status == release.StatusUninstalled {
		verb = "install"
		res.Installed = true
		in := installAction(cfg, name, namespace, timeout, opts)
		in.Replace = n > 0 // reuse the name of an uninstalled release kept in history
		rel, runErr = in.RunWithContext(ctx, ch, values)
	} else {
		res.PreviousRevision = startRevision(hist)
		rel, runErr = upgradeAction(cfg, namespace, timeout, opts).RunWithContext(ctx, name, ch, values)
	}

	if runErr == nil {
		res.Revision, res.Status = rel.Version, rel.Info.Status
		res.Duration = time.Since(start)
		c.log.Info("helm "+verb, "release", name, "namespace", namespace,
			"revision", res.Revision, "previousRevision", res.PreviousRevision, "duration", res.Duration)
		return res, nil
	}

	// Failed: find out which revision failed and where the release stands.
	if rel != nil {
		res.FailedRevision = rel.Version
	}
	last, err := cfg.Releases.Last(name)
	switch {
	case err == nil:
		res.Revision, res.Status = last.Version, last.Info.Status
		res.RolledBack = opts.RollbackOnFailure && res.FailedRevision > 0 &&
			last.Version > res.FailedRevision && last.Info.Status == release.StatusDeployed
	case errors.Is(err, ErrReleaseNotFound):
		res.RolledBack = opts.RollbackOnFailure && res.Installed && res.FailedRevision > 0
	default:
		runErr = errors.Join(runErr, fmt.Errorf("read release after failure: %w", err))
	}
	res.Duration = time.Since(start)
	c.log.Info("helm "+verb+" failed", "release", name, "namespace", namespace,
		"failedRevision", res.FailedRevision, "revision", res.Revision, "rolledBack", res.RolledBack,
		"duration", res.Duration)
	return res, fmt.Errorf("helm %s %s/%s: %w", verb, namespace, name, runErr)
}

// installAction is `helm install` of the release with the options'
// wait, rollback (atomic), namespace creation, schema validation and
// post-renderer.
func installAction(cfg *action.Configuration, name, namespace string, timeout time.Duration, opts UpgradeOptions) *action.Install {
	in := action.NewInstall(cfg)
	in.ReleaseName = name
	in.Namespace = namespace
	in.Wait = opts.Wait
	in.Timeout = timeout
	in.Atomic = opts.RollbackOnFailure
	in.CreateNamespace = opts.CreateNamespace
	in.DisableOpenAPIValidation = opts.SkipSchemaValidation
	in.PostRenderer = opts.PostRenderer
	return in
}

// upgradeAction is `helm upgrade --install --reset-values` with the
// options' wait, rollback (atomic), schema validation and post-renderer.
func upgradeAction(cfg *action.Configuration, namespace string, timeout time.Duration, opts UpgradeOptions) *action.Upgrade {
	up := action.NewUpgrade(cfg)
	up.Install = true
	up.Namespace = namespace
	up.ResetValues = true
	up.DisableOpenAPIValidation = opts.SkipSchemaValidation
	up.Wait = opts.Wait
	up.Timeout = timeout
	up.Atomic = opts.RollbackOnFailure
	up.PostRenderer = opts.PostRenderer
	return up
}

// Status returns the release's latest revision, whatever its status.
func (c *Client) Status(ctx context.Context, name, namespace string) (ReleaseInfo, error) {
	if err := ctx.Err(); err != nil {
		return ReleaseInfo{}, err
	}
	cfg, err := c.ActionConfig(namespace)
	if err != nil {
		return ReleaseInfo{}, err
	}
	rel, err := action.NewStatus(cfg).Run(name)
	if err != nil {
		return ReleaseInfo{}, fmt.Errorf("helm status %s/%s: %w", namespace, name, err)
	}
	return infoOf(rel), nil
}

// History returns every stored revision of the release, oldest first.
func (c *Client) History(ctx context.Context, name, namespace string) ([]ReleaseInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg, err := c.ActionConfig(namespace)
	if err != nil {
		return nil, err
	}
	hist, err := history(cfg, name)
	if err != nil {
		return nil, fmt.Errorf("helm history %s/%s: %w", namespace, name, err)
	}
	out := make([]ReleaseInfo, len(hist))
	for i, r := range hist {
		out[i] = infoOf(r)
	}
	return out, nil
}

// Rollback is `helm rollback`: it makes a new revision with the content of
// revision (0 means the one before the latest) and returns it. Helm's actions
// take no context here: ctx is checked before starting and its deadline
// shortens the timeout.
func (c *Client) Rollback(ctx context.Context, name, namespace string, revision int, opts WaitOptions) (ReleaseInfo, error) {
	start := time.Now()
	timeout, err := effectiveTimeout(ctx, opts.Timeout)
	if err != nil {
		return ReleaseInfo{}, fmt.Errorf("helm rollback %s/%s: %w", namespace, name, err)
	}
	cfg, err := c.ActionConfig(namespace)
	if err != nil {
		return ReleaseInfo{}, err
	}
	rb := action.NewRollback(cfg)
	rb.Version = revision
	rb.Wait = opts.Wait
	rb.Timeout = timeout
	if err := rb.Run(name); err != nil {
		return ReleaseInfo{}, fmt.Errorf("helm rollback %s/%s to revision %d: %w", namespace, name, revision, err)
	}
	last, err := cfg.Releases.Last(name)
	if err != nil {
		return ReleaseInfo{}, fmt.Errorf("helm rollback %s/%s: read release: %w", namespace, name, err)
	}
	c.log.Info("helm rollback", "release", name, "namespace", namespace,
		"to", revision, "revision", last.Version, "duration", time.Since(start))
	return infoOf(last), nil
}

// Uninstall is `helm uninstall`: it deletes the release's resources and its
// history. A missing release is an error matching ErrReleaseNotFound.
func (c *Client) Uninstall(ctx context.Context, name, namespace string, opts WaitOptions) error {
	start := time.Now()
	timeout, err := effectiveTimeout(ctx, opts.Timeout)
	if err != nil {
		return fmt.Errorf("helm uninstall %s/%s: %w", namespace, name, err)
	}
	cfg, err := c.ActionConfig(namespace)
	if err != nil {
		return err
	}
	un := action.NewUninstall(cfg)
	un.Wait = opts.Wait
	un.KeepHistory = opts.KeepHistory
	un.DeletionPropagation = "background" // Helm's default, said explicitly
	un.Timeout = timeout
	if _, err := un.Run(name); err != nil {
		return fmt.Errorf("helm uninstall %s/%s: %w", namespace, name, err)
	}
	c.log.Info("helm uninstall", "release", name, "namespace", namespace, "duration", time.Since(start))
	return nil
}

// history returns the release's revisions, oldest first.
func history(cfg *action.Configuration, name string) ([]*release.Release, error) {
	hist, err := action.NewHistory(cfg).Run(name)
	if err != nil {
		return nil, err
	}
	sort.Slice(hist, func(i, j int) bool { return hist[i].Version < hist[j].Version })
	return hist, nil
}

// startRevision is the revision an upgrade starts from: the latest deployed
// one or, when none is deployed, the latest one (as Helm's upgrade decides).
func startRevision(hist []*release.Release) int {
	for i := len(hist) - 1; i >= 0; i-- {
		if hist[i].Info.Status == release.StatusDeployed {
			return hist[i].Version
		}
	}
	return hist[len(hist)-1].Version
}

// effectiveTimeout is timeout (DefaultTimeout if 0), shortened to ctx's
// deadline; an expired or cancelled ctx is an error.
func effectiveTimeout(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		if left <= 0 {
			return 0, context.DeadlineExceeded
		}
		timeout = min(timeout, left)
	}
	return timeout, nil
}
