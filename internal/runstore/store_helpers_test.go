package runstore

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// newStore returns a Store in a fresh namespace of the package's cluster,
// with the CRDs installed.
func newStore(t *testing.T) (*Store, kubernetes.Interface, context.Context) {
	t.Helper()
	c := testenv.Cluster(t)
	testenv.InstallCRDs(t, c.RESTConfig())
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	ns := testNamespace(t)
	s := mustNew(t, c.RESTConfig(), ns)
	if err := s.EnsureNamespace(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureNamespace(ctx); err != nil {
		t.Fatalf("EnsureNamespace on an existing namespace: %v", err)
	}
	return s, cs, ctx
}

func mustNew(t *testing.T, cfg *rest.Config, namespace string) *Store {
	t.Helper()
	s, err := New(cfg, namespace)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var runsGVR = v1alpha1.GroupVersion.WithResource(Resource)

// resource is the run's UpgradeRun as `kubectl get upgraderun NAME -o json`
// shows it.
func resource(t *testing.T, ctx context.Context, s *Store, name string) *unstructured.Unstructured {
	t.Helper()
	dyn, err := dynamic.NewForConfig(testenv.Cluster(t).RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	u, err := dyn.Resource(runsGVR).Namespace(s.Namespace()).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get upgraderun %s: %v", name, err)
	}
	return u
}

func newRun(name, version string, started time.Time) *v1alpha1.UpgradeRun {
	st := metav1.NewMicroTime(started)
	return &v1alpha1.UpgradeRun{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.UpgradeRunSpec{
			Plan: v1alpha1.UpgradePlanSpec{Version: version, Stages: []v1alpha1.Stage{{Name: "crds",
				Steps: []v1alpha1.Step{{Name: "crds", CRDs: &v1alpha1.CRDsStep{Source: v1alpha1.Source{Path: "crds.yaml"}}}}}}},
			PlanDigest:    "sha256:abc",
			SourceDigests: map[string]string{"spec.stages[0].steps[0].crds.source": "sha256:def"},
		},
		Status: v1alpha1.RunStatus{
			Phase:       v1alpha1.RunRunning,
			Attempt:     1,
			Transitions: 1,
			StartedAt:   &st,
			Stages:      []v1alpha1.StageStatus{{Name: "crds", Phase: v1alpha1.PhaseRunning}},
		},
	}
}

// content is what a round trip must keep: spec and status.
func content(t *testing.T, r *v1alpha1.UpgradeRun) string {
	t.Helper()
	b, err := json.Marshal(struct {
		Name   string
		Spec   v1alpha1.UpgradeRunSpec
		Status v1alpha1.RunStatus
	}{r.Name, r.Spec, r.Status})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// testNamespace is unique per test run, so -count=N starts afresh.
func testNamespace(t *testing.T) string {
	name := strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	if len(name) > 40 {
		name = name[:40]
	}
	return fmt.Sprintf("runs-%s-%s", strings.Trim(name, "-"), strings.ToLower(rand.Text()[:6]))
}
