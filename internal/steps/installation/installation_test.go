package installation_test

import (
	"context"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients/clienttest"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/installation"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// An upgrade's Installations on embedded-cluster's real CRD: the first
// step creates one named by the time, labelled for disaster recovery, its
// spec the newest one's with the release's merged over it; the next
// steps move its state; a rollback marks it Failed; a new attempt creates
// another; the earlier Installation is never touched.
func TestInstallationRecordsTheUpgrade(t *testing.T) {
	e := clienttest.New(t)
	testenv.InstallUpstreamCRD(t, testenv.Cluster(t).RESTConfig(), "embedded-cluster/embeddedcluster.replicated.com_installations.yaml", "the installation step's tests")
	ctx := context.Background()
	old := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"binaryName": "shop-stable", "clusterID": "c-123", "config": map[string]any{"version": "2.16.0+k8s-1.33"}},
	}}
	old.SetGroupVersionKind(installation.GVK)
	old.SetName("20260101000000")
	old, err := e.Dynamic.Resource(installation.GVR).Create(ctx, old, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.Dynamic.Resource(installation.GVR).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{})
	})
	attempt := step.RunAttempt{Run: "run-" + e.NS, Attempt: 1}
	run := func(state, reason, spec string) step.Result {
		t.Helper()
		s := v1alpha1.InstallationStep{State: state, Reason: reason}
		if spec != "" {
			s.Spec = &apiextensionsv1.JSON{Raw: []byte(spec)}
		}
		ex, err := installation.New(s, attempt, e.Dynamic)
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			res, err := ex.Run(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != step.Running {
				return res
			}
			time.Sleep(res.After)
		}
		t.Fatal("the step kept running")
		return step.Result{}
	}
	res := run("Installing", "Upgrading Kubernetes", `{"config":{"version":"2.17.1+k8s-1.34"}}`)
	if res.Status != step.Succeeded || !strings.Contains(res.Message, "created, Installing (Upgrading Kubernetes)") {
		t.Fatalf("first step: %+v", res)
	}
	mine := newest(t, e)
	if _, err := time.Parse(installation.NameFormat, mine.GetName()); err != nil || mine.GetName() <= old.GetName() {
		t.Errorf("new Installation named %q, want the time it was created", mine.GetName())
	}
	if mine.GetLabels()[installation.DRLabel] != "ec-install" {
		t.Errorf("labels %v, want embedded-cluster's disaster-recovery label", mine.GetLabels())
	}
	if v, _, _ := unstructured.NestedString(mine.Object, "spec", "config", "version"); v != "2.17.1+k8s-1.34" {
		t.Errorf("spec.config.version %q, want the release's", v)
	}
	if v, _, _ := unstructured.NestedString(mine.Object, "spec", "clusterID"); v != "c-123" {
		t.Errorf("spec.clusterID %q, want the newest Installation's, copied", v)
	}
	run("KubernetesInstalled", "", "")
	if st := state(t, newest(t, e)); st != "KubernetesInstalled" {
		t.Errorf("state %q after the second step, want KubernetesInstalled", st)
	}
	done, err := installation.NewReverter(attempt, e.Dynamic).Revert(ctx, nil)
	if err != nil || !strings.Contains(done.Message, "marked Failed") || state(t, newest(t, e)) != installation.Failed {
		t.Errorf("revert: %+v, %v; state %q", done, err, state(t, newest(t, e)))
	}
	attempt.Attempt = 2
	time.Sleep(time.Second) // a name of its own second
	run("Installing", "", "")
	list, err := e.Dynamic.Resource(installation.GVR).List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 3 {
		t.Fatalf("%d Installations after a second attempt, want 3 (the earlier, the failed, the new)", len(list.Items))
	}
	now, _ := e.Dynamic.Resource(installation.GVR).Get(ctx, old.GetName(), metav1.GetOptions{})
	if now.GetResourceVersion() != old.GetResourceVersion() {
		t.Error("the earlier Installation was written")
	}
}

func newest(t *testing.T, e *clienttest.Env) *unstructured.Unstructured {
	t.Helper()
	list, err := e.Dynamic.Resource(installation.GVR).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out *unstructured.Unstructured
	for i := range list.Items {
		if out == nil || list.Items[i].GetName() > out.GetName() {
			out = &list.Items[i]
		}
	}
	return out
}

func state(t *testing.T, in *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(in.Object, "status", "state")
	return s
}
