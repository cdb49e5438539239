package backup_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/step"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// env is one test's view of the cluster: a namespace for its objects, a
// backup namespace of its own (created by Save), and clients.
type env struct {
	cfg      *rest.Config
	cs       kubernetes.Interface
	dyn      dynamic.Interface
	b        *backup.Client
	ns       string // where the test's objects live
	backupNS string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	cfg := testenv.Cluster(t).RESTConfig()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	suffix := rand.String(6)
	e := &env{cfg: cfg, cs: cs, dyn: dyn, ns: "bk-" + suffix, backupNS: "bk-store-" + suffix}
	if e.b, err = backup.New(cfg, e.backupNS); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, ns := range []string{e.ns, e.backupNS} {
			_ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		}
	})
	return e
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return c
}

func ref(apiVersion, kind, ns, name string) step.Ref {
	return step.Ref{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name}
}

func (e *env) configMapRef(name string) step.Ref { return ref("v1", "ConfigMap", e.ns, name) }

func (e *env) createConfigMap(t *testing.T, name string, data map[string]string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}, Data: data}
	if _, err := e.cs.CoreV1().ConfigMaps(e.ns).Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (e *env) createDeployment(t *testing.T, name, image string) {
	t.Helper()
	e.createDeploymentAs(t, name, image, "")
}

// createDeploymentAs creates the Deployment as field manager ("" for the
// client's default).
func (e *env) createDeploymentAs(t *testing.T, name, image, manager string) {
	t.Helper()
	replicas := int32(2)
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: labels, Annotations: map[string]string{"team": "platform"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: image,
					Env: []corev1.EnvVar{{Name: "MODE", Value: "blue"}},
				}}},
			},
		},
	}
	if _, err := e.cs.AppsV1().Deployments(e.ns).Create(ctx(t), d, metav1.CreateOptions{FieldManager: manager}); err != nil {
		t.Fatal(err)
	}
}

// waitCurrent waits until the object is Current, as the stage would leave it.
func (e *env) waitCurrent(t *testing.T, r step.Ref) {
	t.Helper()
	w, err := kube.NewWaiterForConfig(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WaitCurrent(ctx(t), r, time.Minute); err != nil {
		t.Fatalf("wait for %s: %v", r, err)
	}
}

// get reads an object as the API has it; nil when it does not exist.
func (e *env) get(t *testing.T, r step.Ref) *unstructured.Unstructured {
	t.Helper()
	gvk := r.GroupVersionKind()
	gvr := schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: plural(gvk.Kind)}
	var ri dynamic.ResourceInterface = e.dyn.Resource(gvr)
	if r.Namespace != "" {
		ri = e.dyn.Resource(gvr).Namespace(r.Namespace)
	}
	u, err := ri.Get(ctx(t), r.Name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		t.Fatalf("get %s: %v", r, err)
	}
	return u
}

func plural(kind string) string {
	switch kind {
	case "ConfigMap":
		return "configmaps"
	case "Secret":
		return "secrets"
	case "Deployment":
		return "deployments"
	case "CustomResourceDefinition":
		return "customresourcedefinitions"
	case "Widget":
		return "widgets"
	}
	panic("plural of " + kind)
}

// takeAndSave snapshots refs, saves them under a key and loads them back,
// as the engine does before a stage and on its rollback.
func (e *env) takeAndSave(t *testing.T, key backup.Key, refs ...step.Ref) (*backup.Snapshot, v1alpha1.BackupRef) {
	t.Helper()
	snap, err := e.b.Take(ctx(t), refs, backup.Fresh)
	if err != nil {
		t.Fatalf("Take: %v", err)
	}
	br, err := e.b.Save(ctx(t), key, snap)
	if err != nil {
		t.Fatalf("Save: %v", err)
	}
	loaded, err := e.b.Load(ctx(t), br)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return loaded, br
}

// mustJSON is v's JSON with every object's keys sorted: a taken
// snapshot holds the API server's bytes, in the server's order of keys.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		t.Fatal(err)
	}
	if b, err = json.Marshal(generic); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func runtimeFromUnstructured(u *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}
