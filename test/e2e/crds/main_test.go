// Package crds_test checks the generated CRDs (config/crd/bases) on the
// real local control plane: they are accepted and Established, the demo
// plans are valid UpgradePlans and come back unchanged, invalid plans are
// refused by the API server itself with the field path and the CLI's
// message, the printer columns are served, and status is a subresource.
package crds_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/plan"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	// testTimeout bounds each test as a whole.
	testTimeout = 90 * time.Second
	// repoRoot is three directories up.
	repoRoot = "../../.."
)

var (
	crdGVR  = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	plans   = v1alpha1.GroupVersion.WithResource("upgradeplans")
	runs    = v1alpha1.GroupVersion.WithResource("upgraderuns")
	install sync.Once
	// installErr is why the CRDs could not be installed, for every test.
	installErr error
)

// env is one test's view of the package's cluster.
type env struct {
	c   *localcluster.Cluster
	cfg *rest.Config
	dyn dynamic.Interface
	ctx context.Context
	ns  string // the test's own namespace
}

// newEnv installs the CRDs once per package (applied server-side from
// config/crd/bases, then waited for until Established) and gives the
// test a namespace of its own.
func newEnv(t *testing.T) *env {
	t.Helper()
	c := testenv.Cluster(t)
	cfg := c.RESTConfig()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	install.Do(func() { installErr = installCRDs(cfg, dyn) })
	if installErr != nil {
		t.Fatalf("install the CRDs: %v", installErr)
	}
	return &env{c: c, cfg: cfg, dyn: dyn, ctx: ctx, ns: createNamespace(t, ctx, cfg)}
}

func installCRDs(cfg *rest.Config, dyn dynamic.Interface) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := filepath.Join(repoRoot, "config", "crd", "bases")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	for _, want := range []string{"upshift.dev_upgradeplans.yaml", "upshift.dev_upgraderuns.yaml"} {
		if err != nil || !slices.Contains(files, filepath.Join(dir, want)) {
			return fmt.Errorf("config/crd/bases should hold the UpgradePlan and UpgradeRun CRDs (make generate); found %v (%v)", files, err)
		}
	}
	w, err := kube.NewWaiterForConfig(cfg)
	if err != nil {
		return err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(b, &u.Object); err != nil {
			return err
		}
		data, err := u.MarshalJSON()
		if err != nil {
			return err
		}
		force := true
		if _, err := dyn.Resource(crdGVR).Patch(ctx, u.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "upshift-e2e", Force: &force}); err != nil {
			return err // the API server refuses a CRD whose CEL rules cost too much
		}
		if _, err := w.WaitCRDEstablished(ctx, u.GetName(), 30*time.Second); err != nil {
			return err
		}
	}
	return nil
}

// createNamespace creates "crds-<test>-xxxxx", deleted when the test ends.
func createNamespace(t *testing.T, ctx context.Context, cfg *rest.Config) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return testenv.Namespace(t, ctx, cs, "crds")
}

// demoPlan reads a demo plan file as the CLI does and makes it a resource
// of the namespace: the same file, the same schema.
func demoPlan(t *testing.T, version, ns string) (*v1alpha1.UpgradePlan, *unstructured.Unstructured) {
	t.Helper()
	l, err := plan.Load(filepath.Join(repoRoot, "examples", "demo", version, "plan.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	l.Plan.Namespace = ns
	return l.Plan, toUnstructured(t, l.Plan)
}

func toUnstructured(t *testing.T, obj any) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func fromUnstructured[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// strict refuses unknown fields, as kubectl does by default and as the
// CLI refuses them in a plan file.
var strict = metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict}
