package runner

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/resolve"
)

const plantedEnv = "planted-cluster-id-0123"

// createManager creates the Deployment "manager" whose variables a plan keeps.
func (f *fixture) createManager() {
	f.t.Helper()
	labels := map[string]string{"app": "manager"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "manager"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "controller-manager", Image: "example.com/manager:1.0.0",
					Env: []corev1.EnvVar{
						{Name: "CLUSTER_ID", Value: plantedEnv},
						{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
					},
				}}},
			},
		},
	}
	if _, err := f.cs.AppsV1().Deployments(f.ns).Create(f.ctx, d, metav1.CreateOptions{FieldManager: "platform-installer"}); err != nil {
		f.t.Fatal(err)
	}
}

// managerPlan upgrades the manager's image, keeps its variables, then
// fails on an http gate that answers 503: the stage rolls back.
func (f *fixture) managerPlan(name, failing string, severity v1alpha1.Severity) *resolve.Plan {
	f.t.Helper()
	second := metav1.Duration{Duration: time.Second}
	p := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.UpgradePlanSpec{Version: "1.1.0", Stages: []v1alpha1.Stage{{
		Name: "control-plane",
		Steps: []v1alpha1.Step{{Name: "manager", Image: &v1alpha1.ImageStep{
			Kind: "Deployment", Namespace: f.ns, Name: "manager", Images: map[string]string{"controller-manager": "example.com/manager:1.1.0"}}}},
		Gates: []v1alpha1.Gate{
			{Severity: severity, EnvKept: &v1alpha1.EnvKeptGate{Kind: "Deployment", Namespace: f.ns, Name: "manager", Container: "controller-manager", Names: []string{"CLUSTER_ID", "POD_NAMESPACE"}}},
			{Timeout: &second, HTTP: &v1alpha1.HTTPGate{URL: failing, Interval: &metav1.Duration{Duration: 200 * time.Millisecond}}},
		},
	}}}}
	r, err := resolve.FromSources(p, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

// A rollback verifies the variables an envKept gate names against the
// stage's backup, whoever wrote them. The restore's own comparison covers
// the pod template, env included (backup's
// TestRestoreVerifyHoldsRegressions: an env value Upshift's applier
// changes is a difference), but leaves uncompared a field a manager new
// since took over; here a sidecar injector sets CLUSTER_ID between the
// restore's write and its verification. With a blocking envKept gate
// naming it, the restore is not verified and the message names the
// variable, not its value; with a warning gate it is left to the
// restore's rule, as it was before this gate.
func TestRollbackVerifiesTheVariablesEnvKeptNames(t *testing.T) {
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "degraded", http.StatusServiceUnavailable)
	}))
	t.Cleanup(failing.Close)
	for _, tc := range []struct {
		name     string
		severity v1alpha1.Severity
		phase    v1alpha1.RunPhase
	}{
		{name: "blocking", severity: v1alpha1.SeverityBlocking, phase: v1alpha1.RunRollbackFailed},
		{name: "warning", severity: v1alpha1.SeverityWarning, phase: v1alpha1.RunRolledBack},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.createManager()
			injected := false
			f.s.Backups().BeforeVerify = func() {
				patch := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"manager","namespace":"` + f.ns + `"},"spec":{"template":{"spec":{"containers":[{"name":"controller-manager","env":[{"name":"CLUSTER_ID","value":"injected-by-someone"}]}]}}}}`
				force := true
				if _, err := f.cs.AppsV1().Deployments(f.ns).Patch(f.ctx, "manager", types.ApplyPatchType, []byte(patch), metav1.PatchOptions{FieldManager: "sidecar-injector", Force: &force}); err != nil {
					t.Errorf("inject: %v", err)
				}
				injected = true
			}
			out, err := f.s.Apply(f.ctx, f.managerPlan("keep-"+tc.name, failing.URL, tc.severity), false)
			if err != nil {
				t.Fatal(err)
			}
			if !injected {
				t.Fatal("the stage was never restored")
			}
			st := out.Run.Status.Stages[0]
			if g := st.Gates[0]; g.Phase != v1alpha1.PhaseSucceeded || !strings.Contains(g.Message, "keeps 2 variables") {
				t.Errorf("envKept gate after the image step: %s %q, want Succeeded keeping 2 variables", g.Phase, g.Message)
			}
			if out.Run.Status.Phase != tc.phase {
				t.Fatalf("run %s (%s), want %s; rollback %+v", out.Run.Status.Phase, out.Run.Status.Message, tc.phase, st.Rollback)
			}
			want := "deployment " + f.ns + "/manager container controller-manager: 1 variable not kept: CLUSTER_ID value changed"
			found := false
			for _, d := range st.Rollback.Differences {
				found = found || d == want
				if strings.Contains(d, plantedEnv) || strings.Contains(d, "injected-by-someone") {
					t.Errorf("a rollback difference shows a variable's value: %s", d)
				}
			}
			if blocking := tc.severity == v1alpha1.SeverityBlocking; found != blocking {
				t.Errorf("differences %q: want %q listed: %v", st.Rollback.Differences, want, blocking)
			}
			if !strings.Contains(strings.Join(st.Rollback.NotCompared, "; "), "now managed by sidecar-injector, not compared") {
				t.Errorf("not compared %q: want the injector's field listed by the restore's own rule", st.Rollback.NotCompared)
			}
			for _, d := range st.Rollback.NotCompared {
				if strings.Contains(d, plantedEnv) || strings.Contains(d, "injected-by-someone") {
					t.Errorf("a field the restore did not compare shows a variable's value: %s", d)
				}
			}
		})
	}
}
