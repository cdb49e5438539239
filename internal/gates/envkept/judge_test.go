package envkept

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/step"
)

func workload(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

const manager = `apiVersion: apps/v1
kind: Deployment
metadata: {name: liqo-controller-manager, namespace: liqo}
spec:
  template:
    spec:
      initContainers:
      - name: sidecar
        image: proxy:1
        env: [{name: UPSTREAM, value: "127.0.0.1:8080"}]
      containers:
      - name: controller-manager
        image: liqo:1.0.0
        env:
        - {name: CLUSTER_ID, value: planted-secret-value}
        - name: POD_NAMESPACE
          valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
`

func TestJudge(t *testing.T) {
	spec := v1alpha1.EnvKeptGate{Kind: "Deployment", Namespace: "liqo", Name: "liqo-controller-manager", Container: "controller-manager",
		Names: []string{"POD_NAMESPACE", "CLUSTER_ID", "TENANT_NAMESPACE"}}
	before := workload(t, manager)
	for _, tc := range []struct {
		name    string
		spec    func(v1alpha1.EnvKeptGate) v1alpha1.EnvKeptGate
		live    string
		outcome step.Status
		message string
	}{
		{name: "image changed, variables kept", live: strings.Replace(manager, "liqo:1.0.0", "liqo:1.1.0", 1), outcome: step.Succeeded,
			message: "deployment liqo/liqo-controller-manager container controller-manager keeps 3 variables as before the stage (TENANT_NAMESPACE unset before and after: check the name)"},
		{name: "a value changed", live: strings.Replace(manager, "planted-secret-value", "another-secret-value", 1), outcome: step.Failed,
			message: "deployment liqo/liqo-controller-manager container controller-manager: 1 variable not kept: CLUSTER_ID value changed"},
		{name: "every variable, one added",
			spec: func(s v1alpha1.EnvKeptGate) v1alpha1.EnvKeptGate { s.Names = nil; return s },
			live: strings.Replace(manager, "- {name: CLUSTER_ID", "- {name: EXTRA, value: x}\n        - {name: CLUSTER_ID", 1), outcome: step.Failed,
			message: "container controller-manager: 1 variable not kept: EXTRA added (a value)"},
		{name: "an init container's variables",
			spec: func(s v1alpha1.EnvKeptGate) v1alpha1.EnvKeptGate { s.Container, s.Names = "sidecar", nil; return s },
			live: strings.Replace(manager, "127.0.0.1:8080", "127.0.0.1:9090", 1), outcome: step.Failed,
			message: "container sidecar: 1 variable not kept: UPSTREAM value changed"},
		{name: "no such container before",
			spec: func(s v1alpha1.EnvKeptGate) v1alpha1.EnvKeptGate { s.Container = "manager"; return s },
			live: manager, outcome: step.Failed,
			message: "container manager: the workload had no such container before the stage (its containers: controller-manager, sidecar): check the container's name"},
		{name: "the container is gone", live: strings.Replace(manager, "name: controller-manager", "name: manager", 1), outcome: step.Failed,
			message: "the container is gone (its containers now: manager, sidecar), and its variables with it"},
		{name: "no pod template", live: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: liqo-controller-manager, namespace: liqo}\nspec: {}\n", outcome: step.Failed,
			message: "has no pod template (spec.template.spec)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := spec
			if tc.spec != nil {
				s = tc.spec(spec)
			}
			res := Judge(s, before, workload(t, tc.live))
			if res.Status != tc.outcome || !strings.Contains(res.Message, tc.message) {
				t.Errorf("Judge = %s: %s\nwant %s containing %q", res.Status, res.Message, tc.outcome, tc.message)
			}
			for _, secret := range []string{"planted-secret-value", "another-secret-value", "8080", "9090"} {
				if strings.Contains(res.Message, secret) {
					t.Errorf("the message shows the value %q: %s", secret, res.Message)
				}
			}
		})
	}
}
