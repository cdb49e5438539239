package runstore

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

func TestSaveConflict(t *testing.T) {
	t.Parallel()
	s, _, ctx := newStore(t)
	if err := s.Save(ctx, newRun("demo", "1.0.0", time.Now())); err != nil {
		t.Fatal(err)
	}
	// Creating a run that exists is a conflict, not an overwrite.
	if err := s.Save(ctx, newRun("demo", "2.0.0", time.Now())); !errors.Is(err, ErrConflict) {
		t.Fatalf("second create = %v, want ErrConflict", err)
	}

	a, err := s.Get(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Get(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	a.Status.Message = "written by a"
	if err := s.Save(ctx, a); err != nil {
		t.Fatal(err)
	}
	b.Status.AbortRequested = true
	err = s.Save(ctx, b)
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("save of a stale copy = %v, want ErrConflict", err)
	}
	cur, err := s.Get(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if cur.Status.Message != "written by a" || cur.Status.AbortRequested {
		t.Fatalf("the stale save wrote: %+v", cur.Status)
	}
	// Re-read, change, save: fine.
	cur.Status.AbortRequested = true
	if err := s.Save(ctx, cur); err != nil {
		t.Fatal(err)
	}
	// a is stale now too, even though it wrote last but one.
	if err := s.Save(ctx, a); !errors.Is(err, ErrConflict) {
		t.Fatalf("save of a after b's save = %v, want ErrConflict", err)
	}
}

func TestListOldestFirst(t *testing.T) {
	t.Parallel()
	s, cs, ctx := newStore(t)
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, r := range []struct {
		name    string
		started time.Duration
	}{{"third", 30 * time.Minute}, {"first", 0}, {"second", 10 * time.Minute}} {
		if err := s.Save(ctx, newRun(r.name, "1.0.0", base.Add(r.started))); err != nil {
			t.Fatal(err)
		}
	}
	pending := newRun("pending", "1.0.0", time.Now())
	pending.Status.StartedAt = nil // counts from its creation: now, the newest
	if err := s.Save(ctx, pending); err != nil {
		t.Fatal(err)
	}
	// A foreign Secret with the label is no run; a record of an earlier
	// version is.
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "not-a-run", Namespace: s.Namespace(), Labels: map[string]string{LabelRun: "x"}}, StringData: map[string]string{"k": "v"}}
	if _, err := cs.CoreV1().Secrets(s.Namespace()).Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	writeLegacy(t, ctx, cs, s.Namespace(), newRun("older", "0.9.0", base.Add(20*time.Minute)))
	runs, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range runs {
		names = append(names, r.Name)
		if r.ResourceVersion == "" {
			t.Errorf("run %s listed without ResourceVersion", r.Name)
		}
	}
	if got := strings.Join(names, " "); got != "first second older third pending" {
		t.Fatalf("List = %s, want first second older third pending", got)
	}
	// A listed run saves like a read one.
	runs[0].Status.Message = "listed"
	if err := s.Save(ctx, &runs[0]); err != nil {
		t.Fatalf("save of a listed run: %v", err)
	}
}

func TestDelete(t *testing.T) {
	t.Parallel()
	s, cs, ctx := newStore(t)
	for _, n := range []string{"keep", "drop"} {
		if err := s.Save(ctx, newRun(n, "1.0.0", time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	ref, err := s.SaveSources(ctx, "drop", v1alpha1.UpgradePlanSpec{Version: "1.0.0"}, map[string][]byte{"a": []byte("b")})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "drop"); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Secrets(s.Namespace()).Get(ctx, ref.Secrets[0], metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the sources of a deleted run are still there: %v", err)
	}
	if _, err := s.Get(ctx, "drop"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete = %v, want ErrNotFound", err)
	}
	if _, err := s.LoadSources(ctx, "drop"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("LoadSources after Delete = %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "drop"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second Delete = %v, want ErrNotFound", err)
	}
	runs, err := s.List(ctx)
	if err != nil || len(runs) != 1 || runs[0].Name != "keep" {
		t.Fatalf("List after Delete = %v, %v; want only keep", runs, err)
	}
	// A record of an earlier version is deleted too.
	writeLegacy(t, ctx, cs, s.Namespace(), newRun("old", "0.9.0", time.Now()))
	if err := s.Delete(ctx, "old"); err != nil {
		t.Fatalf("Delete of a record of an earlier version: %v", err)
	}
	if _, err := s.Get(ctx, "old"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete of a record of an earlier version = %v, want ErrNotFound", err)
	}
	// The name is free again.
	if err := s.Save(ctx, newRun("drop", "2.0.0", time.Now())); err != nil {
		t.Fatalf("create after Delete: %v", err)
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

// Saving into a namespace that does not exist says so.
func TestSaveWithoutNamespace(t *testing.T) {
	t.Parallel()
	c := testenv.Cluster(t)
	testenv.InstallCRDs(t, c.RESTConfig())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := mustNew(t, c.RESTConfig(), "runs-never-created")
	start := time.Now()
	err := s.Save(ctx, newRun("demo", "1.0.0", time.Now()))
	if err == nil || !strings.Contains(err.Error(), "runs-never-created") {
		t.Fatalf("Save into a missing namespace = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Save retried a missing namespace for %s", d)
	}
	t.Log(err)
}

// testNamespace is unique per test run, so -count=N starts afresh.
func testNamespace(t *testing.T) string {
	name := strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	if len(name) > 40 {
		name = name[:40]
	}
	return fmt.Sprintf("runs-%s-%s", strings.Trim(name, "-"), strings.ToLower(rand.Text()[:6]))
}

// A save whose patch no longer applies to the stored status (another
// process removed the stage it changes) is a conflict too, not an error
// of its own.
func TestSaveConflictWhenThePatchNoLongerApplies(t *testing.T) {
	t.Parallel()
	s, _, ctx := newStore(t)
	run := newRun("demo", "1.0.0", time.Now())
	run.Status.Stages = append(run.Status.Stages, v1alpha1.StageStatus{Name: "b", Phase: v1alpha1.PhasePending}, v1alpha1.StageStatus{Name: "c", Phase: v1alpha1.PhasePending})
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	other := mustNew(t, testenv.Cluster(t).RESTConfig(), s.Namespace())
	cur, err := other.Get(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	cur.Status.Stages = cur.Status.Stages[:1]
	if err := other.Save(ctx, cur); err != nil {
		t.Fatal(err)
	}
	run.Status.Stages[2].Phase = v1alpha1.PhaseSucceeded // a patch of /status/stages/2/phase
	if err := s.Save(ctx, run); !errors.Is(err, ErrConflict) {
		t.Fatalf("save of a stale run whose patch no longer applies = %v, want ErrConflict", err)
	}
	if got, err := s.Get(ctx, "demo"); err != nil || len(got.Status.Stages) != 1 {
		t.Fatalf("the stale save wrote: %v, %d stages", err, len(got.Status.Stages))
	}
}

// A namespace found once, by EnsureNamespace or by a caller that read it
// (preflight: NamespaceReady), is not asked for again by this store; a
// store that was told nothing asks, and creates it when missing.
func TestEnsureNamespaceAsksOnce(t *testing.T) {
	t.Parallel()
	c := testenv.Cluster(t)
	var gets atomic.Int64
	cfg := rest.CopyConfig(c.RESTConfig())
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTrip(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/") {
				gets.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	fresh := mustNew(t, cfg, testNamespace(t))
	for range 2 {
		if err := fresh.EnsureNamespace(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := gets.Load(); n != 1 {
		t.Errorf("two EnsureNamespace of a missing namespace asked %d times, want once (then created)", n)
	}

	gets.Store(0)
	told := mustNew(t, cfg, "kube-system")
	told.NamespaceReady()
	if err := told.EnsureNamespace(ctx); err != nil {
		t.Fatal(err)
	}
	if n := gets.Load(); n != 0 {
		t.Errorf("EnsureNamespace after NamespaceReady asked %d times, want none", n)
	}
}
