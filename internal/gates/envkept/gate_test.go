package envkept_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/clients/clienttest"
	"github.com/upshift-dev/upshift/internal/gates"
	"github.com/upshift-dev/upshift/internal/gates/envkept"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/step"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const planted = "planted-cluster-secret"

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// manager creates the controller-manager Deployment and returns the
// snapshot a stage's backup would hold of it.
func manager(t *testing.T, e *clienttest.Env) *backup.Snapshot {
	t.Helper()
	labels := map[string]string{"app": "manager"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.NS, Name: "manager"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "controller-manager", Image: "example.com/manager:1.0.0",
					Env: []corev1.EnvVar{
						{Name: "CLUSTER_ID", Value: planted},
						{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
					},
				}}},
			},
		},
	}
	if _, err := e.Clientset.AppsV1().Deployments(e.NS).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	u, err := e.Dynamic.Resource(deployments).Namespace(e.NS).Get(context.Background(), "manager", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &backup.Snapshot{Entries: []backup.Entry{{Ref: step.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: e.NS, Name: "manager"}, Object: u}}}
}

// update changes the live Deployment's one container.
func update(t *testing.T, e *clienttest.Env, change func(c *corev1.Container)) {
	t.Helper()
	// The deployment controller writes the object too (its revision
	// annotation): read it again on a conflict, as kubectl edit would.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := e.Clientset.AppsV1().Deployments(e.NS).Get(context.Background(), "manager", metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(&d.Spec.Template.Spec.Containers[0])
		_, err = e.Clientset.AppsV1().Deployments(e.NS).Update(context.Background(), d, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func check(t *testing.T, e *clienttest.Env, before gates.Before, names ...string) step.Result {
	t.Helper()
	spec := v1alpha1.EnvKeptGate{Kind: "Deployment", Namespace: e.NS, Name: "manager", Container: "controller-manager", Names: names}
	g, err := gates.New(v1alpha1.Gate{EnvKept: &spec}, 10*time.Second, e.Set, before)
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Message, planted) {
		t.Errorf("the gate's message shows a variable's value: %s", res.Message)
	}
	return res
}

// The gate compares the live workload with the backup's copy: a new
// image keeps the variables; a changed value fails, naming the variable
// and not its value.
func TestEnvKeptAgainstTheBackup(t *testing.T) {
	e := clienttest.New(t)
	snap := manager(t, e)

	update(t, e, func(c *corev1.Container) { c.Image = "example.com/manager:1.1.0" })
	if res := check(t, e, snap, "CLUSTER_ID", "POD_NAMESPACE"); res.Status != step.Succeeded || !strings.Contains(res.Message, "keeps 2 variables") {
		t.Errorf("after an image change: %+v, want Succeeded keeping 2 variables", res)
	}

	update(t, e, func(c *corev1.Container) { c.Env[0].Value = "another-cluster" })
	res := check(t, e, snap)
	want := "deployment " + e.NS + "/manager container controller-manager: 1 variable not kept: CLUSTER_ID value changed"
	if res.Status != step.Failed || res.Message != want {
		t.Errorf("after a changed value: %+v\nwant Failed: %s", res, want)
	}
	if res := check(t, e, snap, "POD_NAMESPACE"); res.Status != step.Succeeded {
		t.Errorf("a gate that does not name the changed variable: %+v, want Succeeded", res)
	}

	if err := e.Clientset.AppsV1().Deployments(e.NS).Delete(context.Background(), "manager", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if res := check(t, e, snap); res.Status != step.Failed || !strings.Contains(res.Message, "is gone") {
		t.Errorf("after the workload was deleted: %+v, want Failed: is gone", res)
	}
}

// What the backup holds decides: a workload it does not name fails with
// the fix; one that did not exist before the stage has nothing to keep.
func TestEnvKeptNeedsTheWorkloadInTheBackup(t *testing.T) {
	e := clienttest.New(t)
	manager(t, e)
	res := check(t, e, &backup.Snapshot{})
	if res.Status != step.Failed || !strings.Contains(res.Message, envkept.StageHint) {
		t.Errorf("with a backup that does not hold the workload: %+v, want Failed with %q", res, envkept.StageHint)
	}
	absent := &backup.Snapshot{Entries: []backup.Entry{{Ref: step.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: e.NS, Name: "manager"}}}}
	if res := check(t, e, absent); res.Status != step.Succeeded || !strings.Contains(res.Message, "did not exist before the stage") {
		t.Errorf("with a workload the stage created: %+v, want Succeeded", res)
	}
	if _, err := gates.New(v1alpha1.Gate{EnvKept: &v1alpha1.EnvKeptGate{Kind: "Deployment", Namespace: e.NS, Name: "manager", Container: "c"}}, time.Second, e.Set, nil); err == nil {
		t.Error("an envKept gate without the stage's backup was built")
	}
}
