package helm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/kube"
)

// StartingRevision is the revision to come back to if what follows fails:
// the release's latest deployed revision (or, with none deployed, its
// latest, as Helm's upgrade starts from), and 0 when the release is not
// installed.
func StartingRevision(ctx context.Context, hc *helmx.Client, release, namespace string) (int, error) {
	hist, err := hc.History(ctx, release, namespace)
	if errors.Is(err, helmx.ErrReleaseNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	last := hist[len(hist)-1]
	if last.Status == helmx.StatusUninstalled {
		return 0, nil
	}
	for i := len(hist) - 1; i >= 0; i-- {
		if hist[i].Status == helmx.StatusDeployed {
			return hist[i].Revision, nil
		}
	}
	return last.Revision, nil
}

// RollbackTo puts the release back on revision's content and waits until
// its objects are Current; revision 0 uninstalls it. It does nothing when
// the latest revision is deployed with that content already (the step's
// own rollback-on-failure did it, or a resumed rollback), so it can be
// called again after a crash. It returns what it did, for messages.
func RollbackTo(ctx context.Context, c Clients, release, namespace string, revision int, timeout time.Duration) (string, error) {
	latest, err := c.Helm.Latest(ctx, release, namespace)
	gone := errors.Is(err, helmx.ErrReleaseNotFound) || (err == nil && latest.Status == helmx.StatusUninstalled)
	if err != nil && !gone {
		return "", err
	}
	if revision == 0 {
		if gone {
			return fmt.Sprintf("release %s/%s is not installed, as before", namespace, release), nil
		}
		if err := c.Helm.Uninstall(ctx, release, namespace, helmx.WaitOptions{Wait: true, Timeout: timeout}); err != nil {
			return "", err
		}
		return fmt.Sprintf("uninstalled release %s/%s, which the plan had installed", namespace, release), nil
	}
	target, err := c.Helm.Revision(ctx, release, namespace, revision)
	if err != nil {
		return "", err
	}
	if !gone && latest.Status == helmx.StatusDeployed && sameContent(latest, target) {
		if err := waitCurrent(ctx, c, namespace, latest.Manifest, timeout); err != nil {
			return "", err
		}
		return fmt.Sprintf("release %s/%s is back on revision %d's content (revision %d)", namespace, release, revision, latest.Revision), nil
	}
	info, err := c.Helm.Rollback(ctx, release, namespace, revision, helmx.WaitOptions{Timeout: timeout})
	if err != nil {
		return "", err
	}
	if err := waitCurrent(ctx, c, namespace, target.Manifest, timeout); err != nil {
		return "", fmt.Errorf("release %s/%s rolled back to revision %d, but: %w", namespace, release, revision, err)
	}
	return fmt.Sprintf("release %s/%s rolled back to revision %d (as revision %d, chart %s %s)",
		namespace, release, revision, info.Revision, target.Chart, target.ChartVersion), nil
}

// waitCurrent waits until the objects of a release manifest are Current.
func waitCurrent(ctx context.Context, c Clients, namespace, manifest string, timeout time.Duration) error {
	objs, err := objectsOf(manifest, namespace, c.Mapper)
	if err != nil {
		return err
	}
	return waitAll(ctx, c.Waiter, objs, timeout)
}

// waitAll waits until every object is Current.
func waitAll(ctx context.Context, w *kube.Waiter, objs []*unstructured.Unstructured, timeout time.Duration) error {
	refs := make([]kube.ObjectRef, 0, len(objs))
	for _, o := range objs {
		refs = append(refs, kube.RefOf(o))
	}
	return w.WaitAllCurrent(ctx, refs, timeout)
}

// sameContent: both revisions deploy the same chart version, values and
// objects.
func sameContent(a, b helmx.Deployed) bool {
	return a.Chart == b.Chart && a.ChartVersion == b.ChartVersion &&
		a.Manifest == b.Manifest && sameValues(a.Values, b.Values)
}

// sameValues compares values as JSON: stored revisions and values read
// from YAML decode numbers alike, and an empty map equals none.
func sameValues(a, b map[string]any) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}
