package helm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/budget"
)

// Clients are what the step works with.
type Clients struct {
	Helm   *helmx.Client
	Waiter *kube.Waiter
	Mapper meta.RESTMapper
}

// Executor installs or upgrades one release.
type Executor struct {
	spec    v1alpha1.HelmStep
	chart   *helmx.Chart
	values  map[string]any
	timeout time.Duration
	// scrub hides the values in errors from Helm and the API server,
	// which may quote them (a schema's pattern, an invalid field of a
	// rendered object): messages are stored in the run record.
	scrub *redact.Scrubber
	Clients
}

var (
	_ step.Executor = (*Executor)(nil)
	_ step.Renderer = (*Executor)(nil)
)

// New builds the step from its loaded chart and merged values.
func New(spec v1alpha1.HelmStep, ch *helmx.Chart, values map[string]any, timeout time.Duration, c Clients) (*Executor, error) {
	switch {
	case ch == nil || ch.Metadata == nil:
		return nil, errors.New("a helm step needs a chart")
	case timeout <= 0:
		return nil, errors.New("a helm step needs a positive timeout")
	case c.Helm == nil || c.Waiter == nil || c.Mapper == nil:
		return nil, errors.New("a helm step needs the Helm client, a waiter and a REST mapper")
	}
	return &Executor{spec: spec, chart: ch, values: values, timeout: timeout, Clients: c,
		scrub: redact.NewScrubber(redact.Leaves(values)...)}, nil
}

// Rendered renders the chart with the step's values against the cluster
// (its API versions, its lookups; Helm's server-side dry run) and returns
// Targets and the rendered objects from that one render: what preflight
// asks before any stage runs.
//
// It skips Helm's schema check, as Run does: on an API server that
// validates fields itself (every Kubernetes since 1.27) that check
// validates nothing, and only downloads the cluster's OpenAPI documents
// to learn so; the API server validates each object when Run writes it.
func (e *Executor) Rendered(ctx context.Context) ([]step.Ref, []*unstructured.Unstructured, error) {
	now, next, _, err := e.manifests(ctx)
	if err != nil {
		return nil, nil, err
	}
	return refsOf(now, next), next, nil
}

// Targets are the objects of the release's latest revision and of the
// chart rendered with the step's values: what the upgrade may change,
// create or delete.
func (e *Executor) Targets(ctx context.Context) ([]step.Ref, error) {
	refs, _, err := e.Rendered(ctx)
	return refs, err
}

// manifests are the objects of the release's latest revision (none when
// it is not installed, latest then nil) and those of the chart rendered
// with the step's values.
func (e *Executor) manifests(ctx context.Context) (now, next []*unstructured.Unstructured, latest *helmx.Deployed, err error) {
	rendered, err := e.Helm.Render(ctx, e.spec.Release, e.spec.Namespace, e.chart, e.values, false)
	if err != nil {
		return nil, nil, nil, e.scrub.Error(err)
	}
	if next, err = objectsOf(rendered, e.spec.Namespace, e.Mapper); err != nil {
		return nil, nil, nil, e.scrub.Error(err)
	}
	l, err := e.Helm.Latest(ctx, e.spec.Release, e.spec.Namespace)
	switch {
	case errors.Is(err, helmx.ErrReleaseNotFound):
		return nil, next, nil, nil
	case err != nil:
		return nil, nil, nil, err
	}
	if now, err = objectsOf(l.Manifest, e.spec.Namespace, e.Mapper); err != nil {
		return nil, nil, nil, err
	}
	return now, next, &l, nil
}

// Run installs or upgrades the release, then waits until its objects are
// Current. On failure the release goes back where it started.
func (e *Executor) Run(ctx context.Context) (step.Result, error) {
	b := budget.Start(ctx, e.timeout)
	defer b.Stop()
	rel, ns := e.spec.Release, e.spec.Namespace

	latest, err := e.Helm.Latest(b.Context(), rel, ns)
	exists := err == nil
	if err != nil && !errors.Is(err, helmx.ErrReleaseNotFound) {
		return b.Verdict(err)
	}
	var notes string
	if exists && latest.Status.IsPending() {
		// A run killed mid-upgrade leaves the revision pending; Helm
		// refuses to upgrade until it is resolved.
		msg, err := e.resolvePending(b.Context())
		if err != nil {
			return b.Verdict(err)
		}
		notes = msg + "; "
		latest, err = e.Helm.Latest(b.Context(), rel, ns)
		exists = err == nil
		if err != nil && !errors.Is(err, helmx.ErrReleaseNotFound) {
			return b.Verdict(err)
		}
	}
	if exists && e.upToDate(latest) {
		objs, err := objectsOf(latest.Manifest, ns, e.Mapper)
		if err != nil {
			return step.Result{}, err
		}
		if res, err := e.wait(ctx, b, objs); err != nil || res.Status == step.Failed {
			return res, err
		}
		return step.Success("%srelease %s/%s already at revision %d (chart %s %s), %d objects Current",
			notes, ns, rel, latest.Revision, e.chart.Name(), e.chart.Metadata.Version, len(objs)), nil
	}

	res, err := e.Helm.InstallOrUpgrade(b.Context(), rel, ns, e.chart, e.values, helmx.UpgradeOptions{
		Timeout:         b.Left(),
		CreateNamespace: e.spec.CreateNamespace,
		// Helm's check would only learn that the API server validates
		// each write itself (see Rendered).
		SkipSchemaValidation: true,
	})
	if err != nil {
		if ctx.Err() != nil {
			return step.Result{}, ctx.Err()
		}
		if kube.Unreachable(err) {
			// As with every step kind, an outage stops the run as saved;
			// the resumed step finds the release pending and resolves it.
			return step.Result{}, fmt.Errorf("release %s/%s: %w", ns, rel, e.scrub.Error(err))
		}
		return e.fail(ctx, res, e.scrub.Text(err.Error()))
	}
	now, err := e.Helm.Latest(b.Context(), rel, ns)
	if err != nil {
		return b.Verdict(err)
	}
	objs, err := objectsOf(now.Manifest, ns, e.Mapper)
	if err != nil {
		return step.Result{}, err
	}
	verdict, err := e.wait(ctx, b, objs)
	if err != nil {
		return verdict, err
	}
	if verdict.Status == step.Failed {
		return e.fail(ctx, res, verdict.Message)
	}
	what := fmt.Sprintf("upgraded release %s/%s from revision %d to %d", ns, rel, res.PreviousRevision, res.Revision)
	if res.Installed {
		what = fmt.Sprintf("installed release %s/%s at revision %d", ns, rel, res.Revision)
	}
	return step.Success("%s%s (chart %s %s), %d objects Current", notes, what, e.chart.Name(), e.chart.Metadata.Version, len(objs)), nil
}

// wait waits until objs are Current; a failing object or the timeout is a
// Failed result.
func (e *Executor) wait(ctx context.Context, b *budget.Budget, objs []*unstructured.Unstructured) (step.Result, error) {
	if err := waitAll(ctx, e.Waiter, objs, b.Left()); err != nil {
		return b.Verdict(err)
	}
	return step.Success(""), nil
}

// fail puts the release back where the step found it and reports why.
// The rollback gets its own timeout: the step's may be spent.
func (e *Executor) fail(ctx context.Context, res helmx.Result, why string) (step.Result, error) {
	rctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	back, err := RollbackTo(rctx, e.Clients, e.spec.Release, e.spec.Namespace, res.PreviousRevision, e.timeout)
	if err != nil {
		if ctx.Err() != nil {
			return step.Result{}, ctx.Err()
		}
		if kube.Unreachable(err) {
			return step.Result{}, fmt.Errorf("%s; putting the release back: %w", why, e.scrub.Error(err))
		}
		return step.Failure("%s; and putting the release back failed: %v", why, e.scrub.Error(err)), nil
	}
	return step.Failure("%s; %s", why, back), nil
}

// resolvePending rolls a pending release back to its last deployed
// revision (uninstalls it when none was deployed).
func (e *Executor) resolvePending(ctx context.Context) (string, error) {
	rev, err := StartingRevision(ctx, e.Helm, e.spec.Release, e.spec.Namespace)
	if err != nil {
		return "", err
	}
	return RollbackTo(ctx, e.Clients, e.spec.Release, e.spec.Namespace, rev, e.timeout)
}

// upToDate reports whether the latest revision is deployed with this very
// chart version and values: then the upgrade was done already.
func (e *Executor) upToDate(latest helmx.Deployed) bool {
	return latest.Status == helmx.StatusDeployed &&
		latest.Chart == e.chart.Name() &&
		latest.ChartVersion == e.chart.Metadata.Version &&
		sameValues(latest.Values, e.values)
}
