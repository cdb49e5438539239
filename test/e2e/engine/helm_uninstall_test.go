package engine_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/localcluster"
)

// uninstallPlan writes a plan whose stage extensions uninstalls the
// cache add-on (a release dropping an extension) and whose stage
// workloads sets web's image to webTag.
func (w *world) uninstallPlan(name, webTag string) string {
	dir := w.t.TempDir()
	write(w.t, filepath.Join(dir, "plan.yaml"), fmt.Sprintf(`apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: %s}
spec:
  version: 2.0.0
  stages:
  - name: extensions
    steps:
    - name: drop-cache
      helmUninstall: {release: shop-cache, namespace: shop}
  - name: workloads
    steps:
    - name: web
      image: {kind: Deployment, namespace: shop, name: web, images: {app: "example.com/shop/web:%s"}}
`, name, webTag))
	return filepath.Join(dir, "plan.yaml")
}

// TestHelmUninstallRollsBack: an extension dropped by a release is
// uninstalled with its history kept; when a later stage fails, the
// rollback brings the release back on the revision the stage's backup
// recorded, its objects equal to the capture. The same drop with a good
// web leaves the release uninstalled and its objects gone.
func TestHelmUninstallRollsBack(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	w.installCache()
	cacheBefore := w.cacheState()

	r := w.mustExit(2, nil, "apply", "-f", w.uninstallPlan("drop-2.0.0", "2.0.0-broken"))
	mustContain(t, "apply stderr", r.stderr, "step web failed", "rolled back")
	run := w.run("drop-2.0.0")
	if got := run.Status.Stages[0].Backup.HelmReleases; len(got) != 1 || got[0].Revision != 1 {
		t.Errorf("recorded revisions = %+v, want shop/shop-cache at 1", got)
	}
	mustContain(t, "uninstall step message", run.Status.Stages[0].Steps[0].Message, "uninstalled release shop/shop-cache (revision 1", "history kept")
	st, err := w.helm().Status(w.ctx, "shop-cache", "shop")
	if err != nil || st.Status != helmx.StatusDeployed || st.ChartVersion != "1.0.0" {
		t.Errorf("release after the rollback: %+v, %v; want chart 1.0.0 deployed", st, err)
	}
	if after := w.cacheState(); !reflect.DeepEqual(after, cacheBefore) {
		t.Errorf("cache differs from the capture:\nbefore %+v\nafter  %+v", cacheBefore, after)
	}

	w.mustExit(0, nil, "apply", "-f", w.uninstallPlan("drop-2.0.1", "2.0.0"))
	if st, err := w.helm().Status(w.ctx, "shop-cache", "shop"); err != nil || st.Status != helmx.StatusUninstalled {
		t.Errorf("release after the upgrade: %+v, %v; want uninstalled, its history kept", st, err)
	}
	if _, err := w.cs.AppsV1().Deployments("shop").Get(w.ctx, "shop-cache", metaGet); !apierrors.IsNotFound(err) {
		t.Errorf("the dropped add-on's Deployment: %v, want gone", err)
	}
}
