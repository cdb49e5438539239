package demo_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Every upgrade step and gate targets what 1.0.0 installs: the workload
// exists and has each container the step names; each gate's object
// exists or its selector matches at least one object.
func TestUpgradesTargetTheInstalledPlatform(t *testing.T) {
	installed := load(t, "1.0.0").objects
	for _, v := range versions {
		for _, st := range load(t, v).plan.Spec.Stages {
			for _, s := range st.Steps {
				if s.Image == nil {
					continue
				}
				w := find(installed, s.Image.Kind, s.Image.Namespace, s.Image.Name)
				if w == nil {
					t.Errorf("%s step %s: 1.0.0 has no %s %s/%s", v, s.Name, s.Image.Kind, s.Image.Namespace, s.Image.Name)
					continue
				}
				names := map[string]bool{}
				for _, c := range containers(t, w) {
					names[c["name"].(string)] = true
				}
				for c := range s.Image.Images {
					if !names[c] {
						t.Errorf("%s step %s: %s %s/%s has no container %q", v, s.Name, s.Image.Kind, s.Image.Namespace, s.Image.Name, c)
					}
				}
			}
			for i, g := range st.Gates {
				if k := g.EnvKept; k != nil {
					envKeptHolds(t, v, installed, k)
				}
				if g.Ready == nil {
					continue
				}
				if n := matches(t, installed, g.Ready); n == 0 {
					t.Errorf("%s stage %s gate %d: matches nothing 1.0.0 installs", v, st.Name, i)
				}
			}
		}
	}
}

// envKeptHolds: the gate's workload and container exist in 1.0.0, and
// 1.0.0 sets every variable it names (a misspelt name would pass as
// "unset before and after").
func envKeptHolds(t *testing.T, v string, installed []*unstructured.Unstructured, k *v1alpha1.EnvKeptGate) {
	t.Helper()
	w := find(installed, k.Kind, k.Namespace, k.Name)
	if w == nil {
		t.Errorf("%s envKept gate: 1.0.0 has no %s %s/%s", v, k.Kind, k.Namespace, k.Name)
		return
	}
	for _, c := range containers(t, w) {
		if c["name"] != k.Container {
			continue
		}
		set := map[string]bool{}
		env, _ := c["env"].([]any)
		for _, e := range env {
			set[e.(map[string]any)["name"].(string)] = true
		}
		for _, n := range k.Names {
			if !set[n] {
				t.Errorf("%s envKept gate: container %s of %s %s/%s does not set %s", v, k.Container, k.Kind, k.Namespace, k.Name, n)
			}
		}
		return
	}
	t.Errorf("%s envKept gate: %s %s/%s has no container %q", v, k.Kind, k.Namespace, k.Name, k.Container)
}

func matches(t *testing.T, objs []*unstructured.Unstructured, g *v1alpha1.ReadyGate) int {
	t.Helper()
	if g.Name != "" {
		if find(objs, g.Kind, g.Namespace, g.Name) != nil {
			return 1
		}
		return 0
	}
	sel, err := labels.Parse(g.Selector)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range objs {
		if o.GetAPIVersion() == g.APIVersion && o.GetKind() == g.Kind && o.GetNamespace() == g.Namespace && sel.Matches(labels.Set(o.GetLabels())) {
			n++
		}
	}
	return n
}

// What the platform must look like for the demo to mean something.
func TestInstalledPlatformShape(t *testing.T) {
	installed := load(t, "1.0.0").objects
	for _, o := range installed {
		l := o.GetLabels()
		for _, k := range []string{"app.kubernetes.io/name", "app.kubernetes.io/component"} {
			if l[k] == "" {
				t.Errorf("%s %s/%s: no label %s", o.GetKind(), o.GetNamespace(), o.GetName(), k)
			}
		}
		if l["app.kubernetes.io/part-of"] != "demo" || l["app.kubernetes.io/version"] != "1.0.0" {
			t.Errorf("%s %s/%s: labels %v, want part-of demo, version 1.0.0", o.GetKind(), o.GetNamespace(), o.GetName(), l)
		}
	}
	cm := find(installed, "Deployment", "demo-system", "demo-controller-manager")
	if cm == nil {
		t.Fatal("no controller-manager Deployment")
	}
	if r, _, _ := unstructured.NestedInt64(cm.Object, "spec", "replicas"); r != 2 {
		t.Errorf("controller-manager replicas = %d, want 2", r)
	}
	fieldRef := false
	for _, c := range containers(t, cm) {
		env, _ := c["env"].([]any)
		for _, e := range env {
			if _, ok, _ := unstructured.NestedMap(e.(map[string]any), "valueFrom", "fieldRef"); ok {
				fieldRef = true
			}
		}
	}
	if !fieldRef {
		t.Error("the controller-manager has no env var from a fieldRef: the upgrade must show it survives")
	}
	for _, want := range [][3]string{
		{"DaemonSet", "demo-system", "demo-fabric"}, {"Deployment", "demo-system", "demo-ipam"},
		{"Deployment", "demo-system", "demo-proxy"}, {"Deployment", "demo-tenant-a", "demo-gateway"},
		{"Deployment", "demo-tenant-b", "demo-gateway"},
	} {
		if find(installed, want[0], want[1], want[2]) == nil {
			t.Errorf("1.0.0 installs no %s %s/%s", want[0], want[1], want[2])
		}
	}
	templates := 0
	for _, o := range installed {
		if o.GetKind() == "GatewayTemplate" {
			templates++
		}
	}
	if templates != 2 {
		t.Errorf("%d GatewayTemplates, want 2", templates)
	}
}
