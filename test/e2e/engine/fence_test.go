package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/runner"
)

// bulkObjects is how many ConfigMaps the bulk chart holds: enough that
// Helm, at helmx's 50 requests per second, applies them for seconds.
const bulkObjects = 200

// writeBulkChart writes chart shop-bulk at version v: bulkObjects
// ConfigMaps whose data names the version.
func writeBulkChart(t *testing.T, dir, v string) string {
	t.Helper()
	c := filepath.Join(dir, "bulk-"+v)
	if err := os.MkdirAll(filepath.Join(c, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(c, "Chart.yaml"), fmt.Sprintf("apiVersion: v2\nname: shop-bulk\nversion: %s\n", v))
	write(t, filepath.Join(c, "templates", "configmaps.yaml"), fmt.Sprintf(`{{- range $i := until %d }}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: "bulk-{{ $i }}"}
data: {version: {{ $.Chart.Version | quote }}}
{{- end }}
`, bulkObjects))
	return c
}

// bulkPlan writes a plan that upgrades release bulk to chart v in stage
// addons and web to webTag in stage workloads.
func (w *world) bulkPlan(name, v, webTag string) string {
	dir := w.t.TempDir()
	writeBulkChart(w.t, dir, v)
	var workloads string
	if webTag != "" {
		workloads = fmt.Sprintf(`
  - name: workloads
    steps:
    - name: web
      image: {kind: Deployment, namespace: shop, name: web, images: {app: "example.com/shop/web:%s"}}
`, webTag)
	}
	write(w.t, filepath.Join(dir, "plan.yaml"), fmt.Sprintf(`apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: %s}
spec:
  version: %s
  stages:
  - name: addons
    steps:
    - name: bulk
      timeout: 2m
      helm: {release: bulk, namespace: shop, chart: bulk-%s}
%s`, name, v, v, workloads))
	return filepath.Join(dir, "plan.yaml")
}

// TestLeaseLostDuringHelmRollbackStopsItsWrites: web fails, and the
// rollback has Helm put release bulk back, which takes seconds of writes
// that Helm makes with no context of ours. Another holder takes the lease
// as the rollback starts: the apply stops (exit 4, lease lost, nothing
// recorded as failed), and from the moment it saw the loss no write of
// Upshift's user reaches the API server (the audit log).
func TestLeaseLostDuringHelmRollbackStopsItsWrites(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	w.installPlatform()
	w.mustExit(0, nil, "apply", "-f", w.bulkPlan("shop-bulk-1.0.0", "1.0.0", ""))

	apply := w.startUpshift(append([]string{"apply", "-f", w.bulkPlan("shop-2.0.0", "2.0.0", "2.0.0-broken")}, fastLease...)...)
	// Helm's rollback records revision 3 (pending-rollback) before it
	// applies anything.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err := w.cs.CoreV1().Secrets("shop").Get(w.ctx, "sh.helm.release.v1.bulk.v3", metaGet)
		if err == nil {
			break
		}
		if !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		if apply.exited() || time.Now().After(deadline) {
			t.Fatalf("the rollback of release bulk never started:\n%s", apply.out)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stolen := time.Now()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		l, err := w.cs.CoordinationV1().Leases(runner.DefaultNamespace).Get(w.ctx, "upshift", metaGet)
		if err != nil {
			return err
		}
		holder, seconds, now := "mallory@elsewhere pid 7 (run other) [00]", int32(60), metav1.NewMicroTime(time.Now())
		l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime, l.Spec.AcquireTime = &holder, &seconds, &now, &now
		_, err = w.cs.CoordinationV1().Leases(runner.DefaultNamespace).Update(w.ctx, l, metaUpdate)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if code := apply.wait(t, time.Minute); code != 4 {
		t.Fatalf("apply after losing the lease: want exit 4, got %d\n%s", code, apply.out)
	}
	mustContain(t, "apply output", apply.out.String(), "lost the lease of run shop-2.0.0")
	t.Logf("apply exited %s after the lease was taken", time.Since(stolen).Round(time.Millisecond))

	// Upshift sees the loss in its first read of the Lease after the
	// takeover. A write it sent before may still be received just after
	// (the fence cuts it off, but cannot unsend it): allow a round trip.
	const onTheWire = 50 * time.Millisecond
	events, err := w.c.ReadAudit()
	if err != nil {
		t.Fatal(err)
	}
	var seen time.Time
	for _, e := range localcluster.ByUser(events, upshiftUser) {
		if e.Verb == "get" && e.ObjectRef != nil && e.ObjectRef.Resource == "leases" && e.RequestReceivedTimestamp.After(stolen) {
			seen = e.StageTimestamp
			break
		}
	}
	if seen.IsZero() {
		t.Fatal("the audit log shows no read of the Lease by upshift after the takeover")
	}
	var late []string
	var bulkWrites int // install, upgrade, and the rollback up to the loss
	for _, e := range w.upshiftWrites() {
		if e.ObjectRef != nil && e.ObjectRef.Resource == "configmaps" && strings.HasPrefix(e.ObjectRef.Name, "bulk-") && !e.RequestReceivedTimestamp.After(seen) {
			bulkWrites++
		}
		if e.RequestReceivedTimestamp.After(seen.Add(onTheWire)) {
			late = append(late, fmt.Sprintf("%s %s %s after", e.Verb, e.Object(), e.RequestReceivedTimestamp.Sub(seen)))
		}
	}
	if len(late) > 0 {
		t.Errorf("%d write(s) by upshift after it saw the lease lost (%s after the takeover), the first: %s",
			len(late), seen.Sub(stolen).Round(time.Millisecond), strings.Join(late[:min(len(late), 5)], "; "))
	}
	// Sanity: the loss came in the middle of Helm's rollback.
	rolledBack := bulkWrites - 2*bulkObjects
	t.Logf("the rollback had written %d of the %d ConfigMaps when upshift saw the loss", rolledBack, bulkObjects)
	if rolledBack >= bulkObjects {
		t.Errorf("Helm's rollback had written all %d ConfigMaps before the loss: the takeover came too late to test anything", bulkObjects)
	}
	if ph := w.run("shop-2.0.0").Status.Phase; ph != v1alpha1.RunRollingBack {
		t.Errorf("run saved as %s, want RollingBack as last saved (a lost lease fails nothing)", ph)
	}
}
