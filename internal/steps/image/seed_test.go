package image_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/clients/clienttest"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/image"
)

// countGets counts the GETs of one object's path.
type countGets struct {
	next http.RoundTripper
	path string
	n    atomic.Int32
}

func (c *countGets) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, c.path) {
		c.n.Add(1)
	}
	return c.next.RoundTrip(r)
}

// A step seeded with its stage's backup copy of the workload sets the
// images without reading it again; a copy the workload moved past since
// (another manager changed an image the step's manager set before) is not
// written from: the step reads the workload afresh, and the other
// manager's change stays.
func TestImageStartsFromTheBackupsCopy(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	ctx := context.Background()
	createDeployment(t, e, "web", nil)

	counter := &countGets{path: "/namespaces/" + e.NS + "/deployments/web"}
	cfg := rest.CopyConfig(testenv.Cluster(t).RESTConfig())
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { counter.next = rt; return counter })
	d, err := clients.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, closeCache := d.WithCache()
	defer closeCache()
	counted := func(images map[string]string) *image.Executor {
		ex, err := image.New(v1alpha1.ImageStep{Kind: "Deployment", Namespace: e.NS, Name: "web", Images: images}, 2*time.Minute, d.Applier, d.Waiter, d.Clientset)
		if err != nil {
			t.Fatal(err)
		}
		return ex
	}
	// The copy as a backup reads it, of a workload at rest: the
	// deployment controller writes its status (a new resourceVersion)
	// until the rollout settles.
	backupCopy := func() func(step.Ref) (*unstructured.Unstructured, bool) {
		dep := settled(t, e, "web")
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(dep)
		if err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{Object: m}
		obj.SetAPIVersion("apps/v1")
		obj.SetKind("Deployment")
		return func(ref step.Ref) (*unstructured.Unstructured, bool) {
			if ref.Kind == "Deployment" && ref.Namespace == e.NS && ref.Name == "web" {
				return obj, true
			}
			return nil, false
		}
	}

	// The step's manager sets the sidecar's image (to what it is): it
	// owns it now, and keeps it in every later apply of its own.
	ex := counted(map[string]string{"sidecar": sidecarV1})
	ex.Seed(backupCopy())
	if res, err := ex.Run(ctx); err != nil || res.Status != step.Succeeded {
		t.Fatalf("sidecar step: Run = %+v, %v", res, err)
	}
	if n := counter.n.Load(); n != 0 {
		t.Errorf("seeded with a current copy, the step read the workload %d times; want 0", n)
	}

	// The backup reads the workload, then another manager changes the
	// sidecar's image before the step writes.
	stale := backupCopy()
	const hotfix = "registry.example/proxy:v1-hotfix"
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		dep, err := e.Clientset.AppsV1().Deployments(e.NS).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		dep.Spec.Template.Spec.Containers[1].Image = hotfix
		_, err = e.Clientset.AppsV1().Deployments(e.NS).Update(ctx, dep, metav1.UpdateOptions{FieldManager: "kubectl-edit"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	ex = counted(map[string]string{"web": webV2})
	ex.Seed(stale)
	if res, err := ex.Run(ctx); err != nil || res.Status != step.Succeeded {
		t.Fatalf("web step: Run = %+v, %v", res, err)
	}
	if n := counter.n.Load(); n != 1 {
		t.Errorf("seeded with a copy the workload moved past, the step read it %d times; want 1", n)
	}
	var after *appsv1.Deployment
	if after, err = e.Clientset.AppsV1().Deployments(e.NS).Get(ctx, "web", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if c := after.Spec.Template.Spec.Containers; c[0].Image != webV2 || c[1].Image != hotfix {
		t.Errorf("containers web %s, sidecar %s; want web %s and the other manager's sidecar %s kept", c[0].Image, c[1].Image, webV2, hotfix)
	}

	// Deleted after the backup read it: the step says it is gone (an
	// apply of the copy's patch would have been a create).
	gone := backupCopy()
	if err := e.Clientset.AppsV1().Deployments(e.NS).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ex = counted(map[string]string{"web": webV1})
	ex.Seed(gone)
	res, err := ex.Run(ctx)
	if want := "deployment " + e.NS + "/web not found"; err != nil || res.Status != step.Failed || res.Message != want {
		t.Errorf("seeded with the copy of a workload deleted since: Run = %+v, %v; want the failure %q", res, err, want)
	}
}

// settled waits until the deployment is rolled out and its
// resourceVersion has not moved for a second, and returns it.
func settled(t *testing.T, e *clienttest.Env, name string) *appsv1.Deployment {
	t.Helper()
	var last string
	stableSince := time.Now()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		dep, err := e.Clientset.AppsV1().Deployments(e.NS).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if dep.ResourceVersion != last {
			last, stableSince = dep.ResourceVersion, time.Now()
		}
		st := dep.Status
		rolledOut := st.ObservedGeneration == dep.Generation && st.UpdatedReplicas == *dep.Spec.Replicas && st.ReadyReplicas == *dep.Spec.Replicas && st.Replicas == *dep.Spec.Replicas
		if rolledOut && time.Since(stableSince) >= time.Second {
			return dep
		}
	}
	t.Fatalf("deployment %s/%s did not settle within a minute", e.NS, name)
	return nil
}
