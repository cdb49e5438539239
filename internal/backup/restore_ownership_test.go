package backup_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/kube"
)

// scaleAs sets a Deployment's replicas through its scale subresource, as
// an autoscaler does, under field manager manager.
func (e *env) scaleAs(t *testing.T, name string, replicas int32, manager string) {
	t.Helper()
	s := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}, Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
	if _, err := e.cs.AppsV1().Deployments(e.ns).UpdateScale(ctx(t), name, s, metav1.UpdateOptions{FieldManager: manager}); err != nil {
		t.Fatalf("scale %s as %s: %v", name, manager, err)
	}
}

// applyAs server-side applies a partial Deployment under field manager
// manager, with force, as a controller taking fields over does.
func (e *env) applyAs(t *testing.T, name, manager, partial string) {
	t.Helper()
	body := fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q,"namespace":%q},%s}`, name, e.ns, partial)
	force := true
	if _, err := e.cs.AppsV1().Deployments(e.ns).Patch(ctx(t), name, types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: manager, Force: &force}); err != nil {
		t.Fatalf("apply %s as %s: %v", name, manager, err)
	}
}

// updateAs changes a Deployment with an Update under field manager manager.
func (e *env) updateAs(t *testing.T, name, manager string, change func(c *corev1.Container)) {
	t.Helper()
	deployments := e.cs.AppsV1().Deployments(e.ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := deployments.Get(ctx(t), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(&d.Spec.Template.Spec.Containers[0])
		_, err = deployments.Update(ctx(t), d, metav1.UpdateOptions{FieldManager: manager})
		return err
	})
	if err != nil {
		t.Fatalf("update %s as %s: %v", name, manager, err)
	}
}

// TestRestoreVerifyLeavesFieldsOthersTookOver: an autoscaler that owned
// spec.replicas before the stage, and a sidecar injector new since,
// change the Deployment between the restore's write and its verification.
// Neither fails the rollback; both are listed as not compared.
func TestRestoreVerifyLeavesFieldsOthersTookOver(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	web := ref("apps/v1", "Deployment", e.ns, "web")
	e.createDeployment(t, "web", "registry.example/web:1.0")
	e.scaleAs(t, "web", 3, "hpa-controller")
	e.waitCurrent(t, web)
	snap, _ := e.takeAndSave(t, backup.Key{Run: "r", Stage: "apps", Attempt: 1}, web)

	// The stage: a new image; meanwhile the autoscaler scales out.
	e.updateAs(t, "web", "stage", func(c *corev1.Container) { c.Image = "registry.example/web:2.0" })
	e.scaleAs(t, "web", 4, "hpa-controller")

	e.b.BeforeVerify = func() {
		// What the restore's write left: the snapshot's owners, and the
		// fields it changed under its own manager.
		live := e.get(t, web)
		var restoreOwns string
		for _, mf := range live.GetManagedFields() {
			if mf.Manager == "stage" {
				t.Errorf("after the restore, managedFields still name the stage's manager: %s", mf.FieldsV1.Raw)
			}
			if mf.Manager == kube.RestoreFieldManager && mf.FieldsV1 != nil {
				restoreOwns = string(mf.FieldsV1.Raw)
			}
		}
		if !strings.Contains(restoreOwns, `"f:image"`) || !strings.Contains(restoreOwns, `"f:replicas"`) {
			t.Errorf("after the restore, %s owns %s; want the image and replicas it put back", kube.RestoreFieldManager, restoreOwns)
		}
		// Then, before the verification reads the object back:
		e.scaleAs(t, "web", 5, "hpa-controller")
		e.applyAs(t, "web", "sidecar-injector", `"spec":{"template":{"metadata":{"annotations":{"sidecar.example/status":"injected"}}}}`)
	}
	rb, err := e.b.Restore(ctx(t), snap, backup.RestoreOptions{ReadyTimeout: time.Minute})
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	wantNot := []string{
		"deployment " + e.ns + "/web: spec.replicas was 3 is 5: now managed by hpa-controller (scale), not compared",
		"deployment " + e.ns + `/web: spec.template.metadata.annotations["sidecar.example/status"] was <absent> is "injected": now managed by sidecar-injector, not compared`,
	}
	if len(rb.Differences) != 0 || !slices.Equal(rb.NotCompared, wantNot) {
		t.Errorf("Restore: differences %q, not compared %q; want no differences, not compared %q", rb.Differences, rb.NotCompared, wantNot)
	}
	if img := e.get(t, web).Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"]; img != "registry.example/web:1.0" {
		t.Errorf("image after restore %v, want registry.example/web:1.0", img)
	}
}

// TestRestoreVerifyHoldsRegressions: between the restore's write and its
// verification, the manager that set the image before the stage sets the
// stage's image again, and Upshift's own applier changes an env value:
// both are differences that fail the rollback, while an autoscaler new
// since is only listed.
func TestRestoreVerifyHoldsRegressions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	web := ref("apps/v1", "Deployment", e.ns, "web")
	e.createDeploymentAs(t, "web", "registry.example/web:1.0", "platform-operator")
	e.waitCurrent(t, web)
	snap, _ := e.takeAndSave(t, backup.Key{Run: "r", Stage: "apps", Attempt: 1}, web)

	// The stage: the operator, upgraded, sets a new image.
	e.updateAs(t, "web", "platform-operator", func(c *corev1.Container) { c.Image = "registry.example/web:2.0" })

	e.b.BeforeVerify = func() {
		e.updateAs(t, "web", "platform-operator", func(c *corev1.Container) { c.Image = "registry.example/web:2.0" })
		e.applyAs(t, "web", kube.FieldManager, `"spec":{"template":{"spec":{"containers":[{"name":"web","env":[{"name":"MODE","value":"green"}]}]}}}`)
		e.scaleAs(t, "web", 3, "hpa-controller")
	}
	rb, err := e.b.Restore(ctx(t), snap, backup.RestoreOptions{ReadyTimeout: time.Minute})
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	wantDiffs := []string{
		"deployment " + e.ns + `/web: spec.template.spec.containers[0].env[0].value was "<redacted 4 bytes>" is "<redacted 5 bytes>"`,
		"deployment " + e.ns + `/web: spec.template.spec.containers[0].image was "registry.example/web:1.0" is "registry.example/web:2.0"`,
	}
	wantNot := []string{"deployment " + e.ns + "/web: spec.replicas was 2 is 3: now managed by hpa-controller (scale), not compared"}
	if !slices.Equal(rb.Differences, wantDiffs) || !slices.Equal(rb.NotCompared, wantNot) {
		t.Errorf("Restore:\n differences %q\nnot compared %q\nwant differences %q\nnot compared %q", rb.Differences, rb.NotCompared, wantDiffs, wantNot)
	}
}
