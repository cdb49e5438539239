package helm

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/step"
)

// Release is a helm step's release as its stage's backup and rollback see
// it: the revision it starts from (step.Keeper) and the way back to it
// (step.Reverter). It needs no chart, so a run whose sources cannot be
// read is still rolled back.
type Release struct {
	name, namespace string
	timeout         time.Duration
	clients         Clients
}

var (
	_ step.Keeper   = (*Release)(nil)
	_ step.Reverter = (*Release)(nil)
)

// NewRelease is the release of a helm or helmUninstall step.
func NewRelease(name, namespace string, timeout time.Duration, c Clients) *Release {
	return &Release{name: name, namespace: namespace, timeout: timeout, clients: c}
}

// Keep reads the revision the release starts the stage from (0: not
// installed), which the stage's backup keeps.
func (r *Release) Keep(ctx context.Context) (v1alpha1.HelmRevision, error) {
	rev, err := StartingRevision(ctx, r.clients.Helm, r.name, r.namespace)
	if err != nil {
		return v1alpha1.HelmRevision{}, fmt.Errorf("read release %s/%s: %w", r.namespace, r.name, err)
	}
	return v1alpha1.HelmRevision{Release: r.name, Namespace: r.namespace, Revision: rev}, nil
}

// Revert returns the release to the revision before holds (uninstalls it
// when it was not installed). The objects of the release are Helm's to
// put back: the restore only verifies them.
func (r *Release) Revert(ctx context.Context, before *v1alpha1.BackupRef) (step.Reverted, error) {
	for _, hr := range before.HelmReleases {
		if hr.Release != r.name || hr.Namespace != r.namespace {
			continue
		}
		msg, err := RollbackTo(ctx, r.clients, hr.Release, hr.Namespace, hr.Revision, r.timeout)
		if err != nil {
			return step.Reverted{}, err
		}
		return step.Reverted{Result: step.Success("%s", msg), Owns: r.owns}, nil
	}
	return step.Reverted{Result: step.Failure("the backup records no revision of release %s/%s", r.namespace, r.name)}, nil
}

// owns tells an object of the release, by the annotations Helm sets on
// every object of a release.
func (r *Release) owns(o *unstructured.Unstructured) bool {
	a := o.GetAnnotations()
	return a["meta.helm.sh/release-name"] == r.name && a["meta.helm.sh/release-namespace"] == r.namespace
}
