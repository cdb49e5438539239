package runstore

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

func TestSaveGetRoundTrip(t *testing.T) {
	t.Parallel()
	s, cs, ctx := newStore(t)
	run := newRun("demo-1.1.0", "1.1.0", time.Now())
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	if run.ResourceVersion == "" {
		t.Fatal("Save left ResourceVersion empty")
	}
	got, err := s.Get(ctx, "demo-1.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if content(t, got) != content(t, run) {
		t.Fatalf("Get = %s\nwant %s", content(t, got), content(t, run))
	}
	if got.ResourceVersion != run.ResourceVersion {
		t.Errorf("Get ResourceVersion = %s, Save set %s", got.ResourceVersion, run.ResourceVersion)
	}
	if got.APIVersion != v1alpha1.APIVersion || got.Kind != v1alpha1.RunKind || got.CreationTimestamp.IsZero() {
		t.Errorf("Get metadata: %v %v created %v", got.APIVersion, got.Kind, got.CreationTimestamp)
	}

	// An update is seen by the next Get, and the resource tells kubectl
	// users what it is.
	got.Status.Phase = v1alpha1.RunSucceeded
	got.Status.Transitions++
	if err := s.Save(ctx, got); err != nil {
		t.Fatal(err)
	}
	again, err := s.Get(ctx, "demo-1.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if again.Status.Phase != v1alpha1.RunSucceeded || again.Status.Transitions != 2 {
		t.Errorf("after update: phase %s transitions %d", again.Status.Phase, again.Status.Transitions)
	}
	u := resource(t, ctx, s, "demo-1.1.0")
	if u.GetLabels()[LabelRun] != "demo-1.1.0" || u.GetLabels()[LabelManagedBy] != "upshift" {
		t.Errorf("labels %v", u.GetLabels())
	}
	if v, _, _ := unstructured.NestedString(u.Object, "spec", "plan", "version"); v != "1.1.0" {
		t.Errorf("spec.plan.version %q", v)
	}
	// kstatus: observedGeneration and a Ready condition, True once the
	// run succeeded.
	gen, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	if gen != u.GetGeneration() || gen == 0 || len(conds) != 1 {
		t.Fatalf("observedGeneration %d (generation %d), conditions %v", gen, u.GetGeneration(), conds)
	}
	if c := conds[0].(map[string]any); c["type"] != "Ready" || c["status"] != "True" || c["reason"] != "Succeeded" {
		t.Errorf("condition %v, want Ready True", c)
	}
	secs, err := cs.CoreV1().Secrets(s.Namespace()).List(ctx, metav1.ListOptions{LabelSelector: LabelRun})
	if err != nil || len(secs.Items) != 0 {
		t.Errorf("%d secrets labelled %s (%v): a run is no Secret any more", len(secs.Items), LabelRun, err)
	}
}

func TestGetMissing(t *testing.T) {
	t.Parallel()
	s, _, ctx := newStore(t)
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a missing run = %v, want ErrNotFound", err)
	}
	if _, err := s.LoadSources(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("LoadSources of a missing run = %v, want ErrNotFound", err)
	}
	r := newRun("nope", "1.0.0", time.Now())
	r.ResourceVersion = "12345"
	if err := s.Save(ctx, r); !errors.Is(err, ErrNotFound) {
		t.Fatalf("update of a missing run = %v, want ErrNotFound", err)
	}
}

// A run name as long as a name may be round-trips, and its label (at most
// 63 characters) selects it.
func TestLongRunName(t *testing.T) {
	t.Parallel()
	s, _, ctx := newStore(t)
	name := strings.Repeat("platform.", 27) + "v1" // 245 characters
	if err := s.Save(ctx, newRun(name, "1.0.0", time.Now())); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != name {
		t.Fatalf("Get name = %q", got.Name)
	}
	dyn, err := dynamic.NewForConfig(testenv.Cluster(t).RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	list, err := dyn.Resource(runsGVR).Namespace(s.Namespace()).List(ctx, metav1.ListOptions{LabelSelector: LabelRun + "=" + labelValue(name)})
	if err != nil || len(list.Items) != 1 || list.Items[0].GetName() != name {
		t.Fatalf("selecting the run by label: %v, %v", list, err)
	}
}
