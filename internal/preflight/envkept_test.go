package preflight

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/resolve"
)

// Preflight refuses an envKept gate whose workload no step of its stage
// names (the stage's backup would not hold it), whatever the step kind,
// and one naming a container the workload does not have.
func TestPreflightChecksEnvKeptGates(t *testing.T) {
	f := newManagerFixture(t)
	settings := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: " + f.ns + "}\ndata: {level: \"2\"}\n"
	manager := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: manager, namespace: " + f.ns + "}\n" +
		"spec:\n  selector: {matchLabels: {app: manager}}\n  template:\n    metadata: {labels: {app: manager}}\n" +
		"    spec: {containers: [{name: controller-manager, image: example.com/manager:1.1.0}]}\n"
	const gatePath = "spec.stages[0].gates[0].envKept"
	for _, tc := range []struct {
		name      string
		source    string
		container string
		field     string // "": no problem with the gate
		detail    string
	}{
		{name: "a manifests step that applies the workload", source: manager, container: "controller-manager"},
		{name: "a manifests step that does not", source: settings, container: "controller-manager", field: gatePath,
			detail: `deployment ` + f.ns + `/manager": no step of stage "control-plane" changes it, so the stage's backup does not hold it: put the envKept gate in the stage that changes the workload`},
		{name: "a container the workload lacks", source: manager, container: "manager", field: gatePath + ".container",
			detail: `Invalid value: "manager": deployment ` + f.ns + `/manager has no such container; its containers are: controller-manager`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := v1alpha1.Step{Name: "apply", Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{Path: "manager.yaml"}}}
			p := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "pf"}, Spec: v1alpha1.UpgradePlanSpec{Version: "1.1.0", Stages: []v1alpha1.Stage{{
				Name:  "control-plane",
				Steps: []v1alpha1.Step{s},
				Gates: []v1alpha1.Gate{{EnvKept: &v1alpha1.EnvKeptGate{Kind: "Deployment", Namespace: f.ns, Name: "manager", Container: tc.container}}},
			}}}}
			r, err := resolve.FromSources(p, map[string][]byte{resolve.SourcePath(0, 0, s): []byte(tc.source)})
			if err != nil {
				t.Fatal(err)
			}
			var mine []string
			for _, e := range f.s.Preflight(f.ctx, r) {
				if strings.HasPrefix(e.Field, gatePath) {
					mine = append(mine, e.Error())
				}
				if tc.field != "" && e.Field == tc.field && !strings.Contains(e.Error(), tc.detail) {
					t.Errorf("problem at %s: %s\nwant it to say: %s", e.Field, e.Error(), tc.detail)
				}
			}
			switch {
			case tc.field == "" && len(mine) > 0:
				t.Errorf("refused: %q", mine)
			case tc.field != "" && (len(mine) != 1 || !strings.HasPrefix(mine[0], tc.field+":")):
				t.Errorf("problems %q, want one at %s", mine, tc.field)
			}
		})
	}
}

// managerFixture is a namespace of the test's own holding the Deployment
// "manager" (container controller-manager), and a session.
type managerFixture struct {
	s   *session
	ns  string
	ctx context.Context
}

func newManagerFixture(t *testing.T) *managerFixture {
	t.Helper()
	c := testenv.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	s, err := open(c.RESTConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ns := testenv.Namespace(t, ctx, s.cs, "app")
	labels := map[string]string{"app": "manager"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "manager"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "controller-manager", Image: "example.com/manager:1.0.0"}}},
			},
		},
	}
	if _, err := s.cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return &managerFixture{s: s, ns: ns, ctx: ctx}
}
