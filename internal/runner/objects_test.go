package runner

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/source"
)

// loadPlan writes files (the plan as plan.yaml, and whatever else) into a
// directory of the test's own and loads the plan.
func (f *fixture) loadPlan(files map[string]string) *plan.Loaded {
	f.t.Helper()
	dir := f.t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
	l, err := plan.Load(filepath.Join(dir, "plan.yaml"))
	if err != nil {
		f.t.Fatal(err)
	}
	if errs := plan.Validate(l); len(errs) > 0 {
		f.t.Fatalf("invalid plan: %v", errs.ToAggregate())
	}
	return l
}

func (f *fixture) configMap(name string, data map[string]string, binary map[string][]byte) {
	f.t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data, BinaryData: binary}
	if _, err := f.cs.CoreV1().ConfigMaps(f.ns).Create(f.ctx, cm, metav1.CreateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) secret(name string, data map[string]string) {
	f.t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: data}
	if _, err := f.cs.CoreV1().Secrets(f.ns).Create(f.ctx, s, metav1.CreateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

// cmYAML is a ConfigMap object named name in ns with data.level.
func cmYAML(ns, name, level string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: " + ns + "}\ndata: {level: \"" + level + "\"}\n"
}

// valuesChart renders its values into one ConfigMap, <release>-rendered.
const valuesChart = `apiVersion: v1
kind: ConfigMap
metadata: {name: "{{ .Release.Name }}-rendered"}
data:
  from: {{ .Values.from | quote }}
  level: {{ .Values.level | quote }}
  replicas: {{ .Values.replicas | quote }}
  tag: {{ .Values.image.tag | quote }}
  pullPolicy: {{ .Values.image.pullPolicy | quote }}
`

// A plan whose manifests come from a ConfigMap (one key; every key, data
// and binaryData), whose CRDs come from a Secret, and whose Helm values
// come from a ConfigMap and a Secret (an optional one missing) runs, with
// the values merged in order and the inline values winning; the content
// read is saved with the run, and a ConfigMap changed after the run is a
// changed plan.
func TestObjectSourcesRun(t *testing.T) {
	f := newFixture(t)
	group := f.ns + ".upshift.test"
	f.configMap("web-manifests", map[string]string{"20-c.yaml": cmYAML(f.ns, "c", "1"), "00-a.yaml": cmYAML(f.ns, "a", "1")},
		map[string][]byte{"10-b.yaml": []byte(cmYAML(f.ns, "b", "1"))})
	f.configMap("one", map[string]string{"d.yaml": cmYAML(f.ns, "d", "1"), "other.yaml": "not: applied\n"}, nil)
	f.secret("crds", map[string]string{"crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.` + group + `}
spec:
  group: ` + group + `
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
`})
	f.configMap("addon-values", map[string]string{"values.yaml": "from: configmap\nlevel: cm\nimage: {tag: cm}\n"}, nil)
	f.secret("addon-secret", map[string]string{"prod.yaml": "from: secret\nimage: {tag: secret}\n"})

	l := f.loadPlan(map[string]string{
		"chart/Chart.yaml":            "apiVersion: v2\nname: values\nversion: 1.0.0\n",
		"chart/values.yaml":           "from: chart\nlevel: chart\nreplicas: 1\nimage: {tag: chart, pullPolicy: IfNotPresent}\n",
		"chart/templates/values.yaml": valuesChart,
		"plan.yaml": `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: refs, namespace: ` + f.ns + `}
spec:
  version: "1"
  stages:
  - name: all
    steps:
    - name: crds
      crds: {secret: {name: crds, key: crd.yaml}, minCount: 1}
    - name: every-key
      manifests: {configMap: {name: web-manifests}}
    - name: one-key
      manifests: {configMap: {name: one, key: d.yaml}}
    - name: addon
      helm:
        release: addon
        namespace: ` + f.ns + `
        chart: chart
        valuesFrom:
        - {kind: ConfigMap, name: addon-values}
        - {kind: Secret, name: absent, optional: true}
        - {kind: Secret, name: addon-secret, valuesKey: prod.yaml}
        values: {replicas: 5}
`,
	})
	p, err := resolve.Read(f.ctx, l, f.s.Objects())
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.s.Apply(f.ctx, p, false)
	if err != nil || out.Run.Status.Phase != v1alpha1.RunSucceeded {
		t.Fatalf("apply: %v; run %+v", err, out)
	}

	for _, name := range []string{"a", "b", "c", "d"} {
		if _, err := f.cs.CoreV1().ConfigMaps(f.ns).Get(f.ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("ConfigMap %s from the ConfigMap sources: %v", name, err)
		}
	}
	if _, err := f.s.deps.Dynamic.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}).Namespace(f.ns).List(f.ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("the CRD from the Secret is not served: %v", err)
	}
	rendered, err := f.cs.CoreV1().ConfigMaps(f.ns).Get(f.ctx, "addon-rendered", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"from":       "secret",       // the later valuesFrom over the earlier
		"level":      "cm",           // the ConfigMap's, over the chart's
		"replicas":   "5",            // the inline values win
		"tag":        "secret",       // maps merge key by key
		"pullPolicy": "IfNotPresent", // the chart's, untouched
	}
	for k, v := range want {
		if rendered.Data[k] != v {
			t.Errorf("rendered %s = %q, want %q (all: %v)", k, rendered.Data[k], v, rendered.Data)
		}
	}

	loaded, err := f.s.Store().LoadSources(f.ctx, out.Run.Name) // the plan names its namespace: its run is <ns>.refs
	if err != nil {
		t.Fatal(err)
	}
	saved := loaded.Sources
	for _, key := range []string{"spec.stages[0].steps[0].crds", "spec.stages[0].steps[1].manifests", "spec.stages[0].steps[2].manifests",
		"spec.stages[0].steps[3].helm.valuesFrom[0]", "spec.stages[0].steps[3].helm.valuesFrom[2]"} {
		if _, ok := saved[key]; !ok {
			t.Errorf("source %s is not saved with the run (saved: %v)", key, keysOf(saved))
		}
	}
	if _, ok := saved["spec.stages[0].steps[3].helm.valuesFrom[1]"]; ok {
		t.Error("the missing optional valuesFrom has a saved source")
	}
	if got := string(saved["spec.stages[0].steps[2].manifests"]); got != cmYAML(f.ns, "d", "1") {
		t.Errorf("saved one-key source = %q, want the key's content", got)
	}

	// The ConfigMap changes: the plan's digest changes with it, and the
	// finished run refuses the other content, as for an edited file.
	cm, err := f.cs.CoreV1().ConfigMaps(f.ns).Get(f.ctx, "one", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["d.yaml"] = cmYAML(f.ns, "d", "2")
	if _, err := f.cs.CoreV1().ConfigMaps(f.ns).Update(f.ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	changed, err := resolve.Read(f.ctx, l, f.s.Objects())
	if err != nil {
		t.Fatal(err)
	}
	if changed.Digest == p.Digest {
		t.Fatal("the digest did not change with the ConfigMap")
	}
	if _, err := f.s.Apply(f.ctx, changed, false); !errors.Is(err, ErrRefused) {
		t.Errorf("apply with the changed ConfigMap = %v; want refused, as a changed plan", err)
	}
}

func keysOf(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// What cannot be read is refused before anything runs, naming the field,
// the object and the fix: a missing ConfigMap, a missing key, a required
// valuesFrom that is missing. No cluster at all: the field says it needs
// one.
func TestObjectSourcesRefused(t *testing.T) {
	f := newFixture(t)
	f.configMap("web-manifests", map[string]string{"a.yaml": cmYAML(f.ns, "a", "1")}, nil)
	f.secret("list", map[string]string{"values.yaml": "- s3cr3t\n"})
	step := func(body string) *plan.Loaded {
		return f.loadPlan(map[string]string{
			"chart/Chart.yaml":            "apiVersion: v2\nname: values\nversion: 1.0.0\n",
			"chart/values.yaml":           "from: chart\nlevel: chart\nreplicas: 1\nimage: {tag: chart, pullPolicy: IfNotPresent}\n",
			"chart/templates/values.yaml": valuesChart,
			"plan.yaml": "apiVersion: upshift.dev/v1alpha1\nkind: UpgradePlan\nmetadata: {name: refused, namespace: " + f.ns + "}\nspec:\n  version: \"1\"\n  stages:\n  - name: all\n    steps:\n" +
				"    - name: first\n      pause: {duration: 1s}\n    - name: second\n" + body,
		})
	}
	for _, tt := range []struct {
		name string
		plan *plan.Loaded
		objs bool
		want string
	}{
		{"missing ConfigMap", step("      manifests: {configMap: {name: web-manifest}}\n"), true,
			"spec.stages[0].steps[1].manifests.configMap: ConfigMap web-manifest not found in namespace " + f.ns + ": create it there, or correct the name"},
		{"missing key", step("      job: {configMap: {name: web-manifests, key: job.yaml}}\n"), true,
			"spec.stages[0].steps[1].job.configMap: ConfigMap web-manifests in namespace " + f.ns + " has no key job.yaml (its keys: a.yaml)"},
		{"missing rollbackJob Secret", step("      job: {inline: \"x: y\", rollbackJob: {secret: {name: down}}}\n"), true,
			"spec.stages[0].steps[1].job.rollbackJob.secret: Secret down not found in namespace " + f.ns},
		{"required valuesFrom missing", step("      helm: {release: r, namespace: " + f.ns + ", chart: chart, valuesFrom: [{kind: Secret, name: absent, optional: true}, {kind: Secret, name: db}]}\n"), true,
			"spec.stages[0].steps[1].helm.valuesFrom[1]: Secret db not found in namespace " + f.ns},
		{"valuesFrom Secret key that is not a map of values", step("      helm: {release: r, namespace: " + f.ns + ", chart: chart, valuesFrom: [{kind: Secret, name: list}]}\n"), true,
			"spec.stages[0].steps[1].helm.valuesFrom[0]: secret list/values.yaml is not a YAML map of Helm values (the parser's message is not shown: it may quote the Secret)"},
		{"no cluster", step("      manifests: {secret: {name: web}}\n"), false,
			"spec.stages[0].steps[1].manifests.secret: Secret web: it is read from the cluster, and there is no cluster to read it from"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var objs source.Objects
			if tt.objs {
				objs = f.s.Objects()
			}
			_, err := resolve.Read(f.ctx, tt.plan, objs)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Resolve error = %v\nwant one containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("the error quotes the Secret: %v", err)
			}
		})
	}
}

// A plan acts as its ServiceAccount (the controller's Options.PlanConfig):
// the Secret it may not read is refused naming the ServiceAccount, the
// permission and the fix; the ConfigMap it may read is read as it.
func TestObjectSourcesReadAsThePlanServiceAccount(t *testing.T) {
	f := newFixture(t)
	f.configMap("web-manifests", map[string]string{"a.yaml": cmYAML(f.ns, "a", "1")}, nil)
	f.secret("web-secret", map[string]string{"a.yaml": cmYAML(f.ns, "a", "1")})
	if _, err := f.cs.CoreV1().ServiceAccounts(f.ns).Create(f.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "reader"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "reader"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}}
	if _, err := f.cs.RbacV1().Roles(f.ns).Create(f.ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: f.ns}}}
	if _, err := f.cs.RbacV1().RoleBindings(f.ns).Create(f.ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	planCfg := rest.CopyConfig(testenv.Cluster(t).RESTConfig())
	planCfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + f.ns + ":reader"}
	s, err := Open(testenv.Cluster(t).RESTConfig(), Options{Namespace: f.runsNS, PlanConfig: planCfg})
	if err != nil {
		t.Fatal(err)
	}
	load := func(src string) *plan.Loaded {
		return f.loadPlan(map[string]string{"plan.yaml": "apiVersion: upshift.dev/v1alpha1\nkind: UpgradePlan\nmetadata: {name: as-sa, namespace: " + f.ns + "}\nspec:\n  version: \"1\"\n  stages:\n  - name: all\n    steps:\n    - name: web\n      manifests: " + src + "\n"})
	}
	// The API server's authorizer learns of a new RoleBinding from its
	// own informer, a moment after the write: wait for the grant.
	var rerr error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, rerr = resolve.Read(f.ctx, load("{configMap: {name: web-manifests}}"), s.Objects()); rerr == nil || !apierrors.IsForbidden(rerr) {
			break
		}
	}
	if rerr != nil {
		t.Errorf("the ServiceAccount may get configmaps, yet: %v", rerr)
	}
	_, err = resolve.Read(f.ctx, load("{secret: {name: web-secret}}"), s.Objects())
	want := "spec.stages[0].steps[0].manifests.secret: read Secret web-secret in namespace " + f.ns + ": ServiceAccount " + f.ns + "/reader may not get secrets in namespace " + f.ns + ": grant get on secrets in " + f.ns
	if err == nil || !strings.Contains(err.Error(), want) || !apierrors.IsForbidden(err) {
		t.Errorf("Resolve error = %v\nwant a Forbidden containing %q", err, want)
	}
	// The admin's own reader (the CLI's kubeconfig) reads it.
	objs, err := resolve.NewObjects(testenv.Cluster(t).RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resolve.Read(f.ctx, load("{secret: {name: web-secret}}"), objs); err != nil {
		t.Errorf("with the admin's credentials: %v", err)
	}
}
