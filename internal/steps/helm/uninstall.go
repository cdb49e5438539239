package helm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/budget"
)

// Uninstaller is the helmUninstall step: it removes a release keeping
// its history, as `helm uninstall --keep-history` does, so the stage's
// rollback (Release.Revert, which Helm's rollback serves from that
// history) brings the release back on the revision its backup recorded.
// Embedded-cluster removes the extensions a release drops this way,
// without a way back.
type Uninstaller struct {
	spec    v1alpha1.HelmUninstallStep
	timeout time.Duration
	Clients
}

var (
	_ step.Executor  = (*Uninstaller)(nil)
	_ step.Previewer = (*Uninstaller)(nil)
)

// NewUninstall builds the step.
func NewUninstall(spec v1alpha1.HelmUninstallStep, timeout time.Duration, c Clients) (*Uninstaller, error) {
	switch {
	case timeout <= 0:
		return nil, errors.New("a helmUninstall step needs a positive timeout")
	case c.Helm == nil || c.Waiter == nil || c.Mapper == nil:
		return nil, errors.New("a helmUninstall step needs the Helm client, a waiter and a REST mapper")
	}
	return &Uninstaller{spec: spec, timeout: timeout, Clients: c}, nil
}

// installed is the release's latest revision and its objects; nil when
// the release is not installed (never, or uninstalled already). A release
// the step must not uninstall is an error saying why and what to do.
func (u *Uninstaller) installed(ctx context.Context) (*helmx.Deployed, []*unstructured.Unstructured, error) {
	rel, ns := u.spec.Release, u.spec.Namespace
	l, err := u.Helm.Latest(ctx, rel, ns)
	switch {
	case errors.Is(err, helmx.ErrReleaseNotFound):
		return nil, nil, nil
	case err != nil:
		return nil, nil, err
	case l.Status == helmx.StatusUninstalled:
		return nil, nil, nil
	case l.Status == helmx.StatusFailed || l.Status.IsPending():
		// The stage's backup keeps the last deployed revision, not this
		// one: the rollback would bring back other objects than were
		// removed. A pending one is another client's operation in flight.
		return nil, nil, fmt.Errorf("release %s/%s is %s at revision %d: bring it back to a deployed revision first (helm rollback %s -n %s), then run again",
			ns, rel, l.Status, l.Revision, rel, ns)
	}
	objs, err := objectsOf(l.Manifest, ns, u.Mapper)
	if err != nil {
		return nil, nil, err
	}
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" && o.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
			// Helm deletes a CRD of the chart's templates, and with it
			// every object of its kind in the cluster, which no rollback
			// brings back.
			return nil, nil, fmt.Errorf("release %s/%s templates CRD %s: an uninstall would delete it and every object of its kind; annotate it helm.sh/resource-policy: keep, or move it to the chart's crds/ directory, before the release is dropped",
				ns, rel, o.GetName())
		}
	}
	return &l, objs, nil
}

// Targets are the objects of the release's latest revision: what the
// uninstall deletes, so the stage's backup captures them and its
// rollback verifies them restored.
func (u *Uninstaller) Targets(ctx context.Context) ([]step.Ref, error) {
	_, objs, err := u.installed(ctx)
	if err != nil {
		return nil, err
	}
	return refsOf(objs), nil
}

// Run uninstalls the release and waits until its objects are gone. A
// release that is not installed (a resumed run whose uninstall was done)
// succeeds as it is.
func (u *Uninstaller) Run(ctx context.Context) (step.Result, error) {
	b := budget.Start(ctx, u.timeout)
	defer b.Stop()
	rel, ns := u.spec.Release, u.spec.Namespace
	l, objs, err := u.installed(b.Context())
	if err != nil {
		return b.Verdict(err)
	}
	if l == nil {
		return step.Success("release %s/%s is not installed", ns, rel), nil
	}
	err = u.Helm.Uninstall(b.Context(), rel, ns, helmx.WaitOptions{Wait: true, Timeout: b.Left(), KeepHistory: true})
	if err != nil {
		if ctx.Err() != nil {
			return step.Result{}, ctx.Err()
		}
		return b.Verdict(err)
	}
	return step.Success("uninstalled release %s/%s (revision %d, chart %s %s, %d objects), its history kept for a rollback",
		ns, rel, l.Revision, l.Chart, l.ChartVersion, len(objs)), nil
}

// Preview lists the objects the uninstall deletes.
func (u *Uninstaller) Preview(ctx context.Context) ([]step.Change, error) {
	l, objs, err := u.installed(ctx)
	if err != nil || l == nil {
		return nil, err
	}
	note := fmt.Sprintf("release %s/%s: revision %d (chart %s %s) uninstalled, its history kept",
		u.spec.Namespace, u.spec.Release, l.Revision, l.Chart, l.ChartVersion)
	out := make([]step.Change, 0, len(objs))
	for _, r := range refsOf(objs) {
		out = append(out, step.Change{Ref: r, Action: step.Delete, Note: note})
	}
	return out, nil
}
