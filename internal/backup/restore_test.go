package backup_test

import (
	"encoding/base64"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/redact"
)

// sameAsCaptured is the test's own check that a restored object is the one
// it captured: spec, labels and annotations, but for the revision counter
// the Deployment controller maintains.
func sameAsCaptured(t *testing.T, before, after *unstructured.Unstructured) {
	t.Helper()
	if !reflect.DeepEqual(before.Object["spec"], after.Object["spec"]) {
		t.Errorf("spec after restore:\n%s\nwant:\n%s", mustJSON(t, after.Object["spec"]), mustJSON(t, before.Object["spec"]))
	}
	if !reflect.DeepEqual(before.GetLabels(), after.GetLabels()) {
		t.Errorf("labels after restore %v, want %v", after.GetLabels(), before.GetLabels())
	}
	annotations := func(u *unstructured.Unstructured) map[string]string {
		a := u.GetAnnotations()
		delete(a, "deployment.kubernetes.io/revision")
		return a
	}
	if !reflect.DeepEqual(annotations(before), annotations(after)) {
		t.Errorf("annotations after restore %v, want %v", annotations(after), annotations(before))
	}
}

func TestRestoreDeployment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	web := ref("apps/v1", "Deployment", e.ns, "web")
	e.createDeployment(t, "web", "registry.example/web:1.0")
	e.waitCurrent(t, web)
	before := e.get(t, web)
	snap, _ := e.takeAndSave(t, backup.Key{Run: "r", Stage: "apps", Attempt: 1}, web)

	// The stage: a new image, changed and added env, a new label.
	deployments := e.cs.AppsV1().Deployments(e.ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := deployments.Get(ctx(t), "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		c := &d.Spec.Template.Spec.Containers[0]
		c.Image = "registry.example/web:2.0"
		c.Env = []corev1.EnvVar{{Name: "MODE", Value: "green"}, {Name: "FEATURE_X", Value: "on"}}
		d.Labels["changed-by"] = "stage"
		_, err = deployments.Update(ctx(t), d, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	e.waitCurrent(t, web)

	rb, err := e.b.Restore(ctx(t), snap, backup.RestoreOptions{ReadyTimeout: time.Minute})
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if len(rb.Differences) != 0 || rb.Restored != 1 || rb.Deleted != 0 {
		t.Fatalf("Restore: %+v, want 1 restored and no differences", rb)
	}
	after := e.get(t, web)
	sameAsCaptured(t, before, after)
	var d appsv1.Deployment
	if err := runtimeFromUnstructured(after, &d); err != nil {
		t.Fatal(err)
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; img != "registry.example/web:1.0" {
		t.Errorf("image after restore %q, want registry.example/web:1.0", img)
	}
	// Restore waited until the old revision is rolled out again.
	if d.Status.ObservedGeneration != d.Generation || d.Status.UpdatedReplicas != 2 || d.Status.AvailableReplicas != 2 {
		t.Errorf("Restore returned before the Deployment was Current: %+v", d.Status)
	}
}

func TestRestoreDeletesWhatTheStageCreatedAndRecreatesWhatItDeleted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createConfigMap(t, "kept-settings", map[string]string{"a": "1"})
	e.createConfigMap(t, "removed-by-stage", map[string]string{"b": "2"})
	snap, _ := e.takeAndSave(t, backup.Key{Run: "r", Stage: "config", Attempt: 1},
		e.configMapRef("kept-settings"), e.configMapRef("removed-by-stage"), e.configMapRef("new-in-stage"))

	// The stage: changes one, deletes one, creates one.
	cms := e.cs.CoreV1().ConfigMaps(e.ns)
	cm, err := cms.Get(ctx(t), "kept-settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"a": "100", "extra": "x"}
	if _, err := cms.Update(ctx(t), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx(t), "removed-by-stage", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.createConfigMap(t, "new-in-stage", map[string]string{"c": "3"})

	rb, err := e.b.Restore(ctx(t), snap, backup.RestoreOptions{ReadyTimeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if len(rb.Differences) != 0 || rb.Restored != 2 || rb.Deleted != 1 || len(rb.Kept) != 0 {
		t.Errorf("Restore: %+v, want 2 restored, 1 deleted, no differences", rb)
	}
	if got := e.get(t, e.configMapRef("new-in-stage")); got != nil {
		t.Errorf("the ConfigMap the stage created still exists: %v", got.Object["data"])
	}
	for name, want := range map[string]string{"kept-settings": "map[a:1]", "removed-by-stage": "map[b:2]"} {
		got := e.get(t, e.configMapRef(name))
		if got == nil {
			t.Errorf("%s is missing after restore", name)
			continue
		}
		if fmt.Sprint(got.Object["data"]) != want {
			t.Errorf("%s data after restore %v, want %s", name, got.Object["data"], want)
		}
	}
}

func TestRestoreKeepsCRDTheStageCreated(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	group := "g" + rand.String(6) + ".example.com"
	crdName := "widgets." + group
	crd := ref("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", crdName)
	widget := ref(group+"/v1", "Widget", e.ns, "w1")
	snap, br := e.takeAndSave(t, backup.Key{Run: "r", Stage: "crds", Attempt: 1}, crd, widget)
	if br.Absent != 2 {
		t.Fatalf("snapshot: %d absent, want 2 (the CRD and the Widget of a kind not served yet)", br.Absent)
	}

	// The stage: installs the CRD and creates a Widget.
	crdObj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(fmt.Sprintf(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %s}
spec:
  group: %s
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, crdName, group)), &crdObj.Object); err != nil {
		t.Fatal(err)
	}
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := e.dyn.Resource(crdGVR).Create(ctx(t), crdObj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.dyn.Resource(crdGVR).Delete(ctx(t), crdName, metav1.DeleteOptions{}) })
	w, err := kube.NewWaiterForConfig(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WaitCRDEstablished(ctx(t), crdName, time.Minute); err != nil {
		t.Fatal(err)
	}
	widgetGVR := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	wObj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1", "namespace": e.ns},
		"spec":     map[string]any{"size": int64(3)},
	}}
	err = retry.OnError(retry.DefaultBackoff, func(error) bool { return true }, func() error {
		_, err := e.dyn.Resource(widgetGVR).Namespace(e.ns).Create(ctx(t), wObj, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	rb, err := e.b.Restore(ctx(t), snap, backup.RestoreOptions{ReadyTimeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	wantKept := "customresourcedefinition " + crdName + ": created by the stage, kept: deleting a CRD deletes its data"
	if !slices.Equal(rb.Kept, []string{wantKept}) || rb.Deleted != 1 || len(rb.Differences) != 0 {
		t.Errorf("Restore: %+v, want the CRD kept (%q), the Widget deleted, no differences", rb, wantKept)
	}
	if e.get(t, crd) == nil {
		t.Error("the CRD was deleted")
	}
	if _, err := e.dyn.Resource(widgetGVR).Namespace(e.ns).Get(ctx(t), "w1", metav1.GetOptions{}); err == nil {
		t.Error("the Widget the stage created still exists")
	}
}

func TestRestoreSecretAndRedacted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const password = "s3cr3t-pa55word"
	secrets := e.cs.CoreV1().Secrets(e.ns)
	if _, err := secrets.Create(ctx(t), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: e.ns},
		Data:       map[string][]byte{"password": []byte(password)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	db := ref("v1", "Secret", e.ns, "db")
	snap, _ := e.takeAndSave(t, backup.Key{Run: "r", Stage: "db", Attempt: 1}, db)

	s, err := secrets.Get(ctx(t), "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Data = map[string][]byte{"password": []byte("rotated-by-stage"), "extra": []byte("x")}
	if _, err := secrets.Update(ctx(t), s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// What a verify would report about the changed Secret shows no value.
	differences, _ := backup.Compare(snap.Entries[0].Object, e.get(t, db))
	for _, d := range differences {
		if strings.Contains(d, "rotated") || strings.Contains(d, base64.StdEncoding.EncodeToString([]byte("rotated-by-stage"))) {
			t.Errorf("difference %q shows a Secret value", d)
		}
	}

	rb, err := e.b.Restore(ctx(t), snap, backup.RestoreOptions{ReadyTimeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if len(rb.Differences) != 0 || rb.Restored != 1 {
		t.Errorf("Restore: %+v, want 1 restored, no differences", rb)
	}
	s, err = secrets.Get(ctx(t), "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Data) != 1 || string(s.Data["password"]) != password {
		t.Errorf("Secret keys after restore %v, want only the original password", slices.Sorted(maps.Keys(s.Data)))
	}

	redacted := redact.Object(snap.Entries[0].Object)
	shown := mustJSON(t, redacted)
	if strings.Contains(shown, password) || strings.Contains(shown, base64.StdEncoding.EncodeToString([]byte(password))) {
		t.Errorf("Redacted shows the password: %s", shown)
	}
	if got, want := redacted.Object["data"].(map[string]any)["password"], fmt.Sprintf("<redacted %d bytes>", len(password)); got != want {
		t.Errorf("Redacted password %q, want %q", got, want)
	}
	if got := snap.Entries[0].Object.Object["data"].(map[string]any)["password"]; got != base64.StdEncoding.EncodeToString([]byte(password)) {
		t.Errorf("Redacted changed the snapshot itself: %v", got)
	}
}

func TestRestoreReportsWorkloadNotReady(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	web := ref("apps/v1", "Deployment", e.ns, "web")
	// Broken before the stage: the restored Deployment cannot be Ready.
	e.createDeployment(t, "web", "registry.example/web:broken")
	snap, _ := e.takeAndSave(t, backup.Key{Run: "r", Stage: "apps", Attempt: 1}, web)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error { // the controller writes it too
		d, err := e.cs.AppsV1().Deployments(e.ns).Get(ctx(t), "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Spec.Template.Spec.Containers[0].Image = "registry.example/web:2.0"
		_, err = e.cs.AppsV1().Deployments(e.ns).Update(ctx(t), d, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	e.waitCurrent(t, web)

	rb, err := e.b.Restore(ctx(t), snap, backup.RestoreOptions{ReadyTimeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	t.Logf("differences: %q", rb.Differences)
	if len(rb.Differences) != 1 || !strings.HasPrefix(rb.Differences[0], "deployment "+e.ns+"/web: not Ready") {
		t.Errorf("Restore differences %q, want one saying deployment %s/web is not Ready", rb.Differences, e.ns)
	}
}
