package redact

import (
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"strconv"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

const marker = "s3cr3t-marker"

// secretPlan plants marker in every place a plan may carry a secret.
func secretPlan() v1alpha1.UpgradePlanSpec {
	inline := "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: n}\nstringData: {password: " + marker + "}\n"
	src := func(s string) v1alpha1.Source { return v1alpha1.Source{Inline: s} }
	from := src(inline)
	rb := v1alpha1.Source{URL: "https://127.0.0.1/down.yaml?token=" + marker}
	return v1alpha1.UpgradePlanSpec{Version: "1", Stages: []v1alpha1.Stage{{
		Name: "all",
		Steps: []v1alpha1.Step{
			{Name: "crds", CRDs: &v1alpha1.CRDsStep{Source: src("# " + marker)}},
			{Name: "manifests", Manifests: &v1alpha1.ManifestsStep{Source: src(inline)}},
			{Name: "url", Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{URL: "https://u:" + marker + "@127.0.0.1/m.yaml"}}},
			{Name: "job", Job: &v1alpha1.JobStep{Source: src("env: " + marker), RollbackJob: &rb}},
			{Name: "recreate", Recreate: &v1alpha1.RecreateStep{Kind: "Deployment", From: &from}},
			{Name: "helm", Helm: &v1alpha1.HelmStep{Release: "r", Namespace: "n", Chart: "c",
				Repo:        "https://bot:" + marker + "@charts.example.com/?t=" + marker,
				ValuesFiles: []string{"values.yaml"},
				Values:      &apiextensionsv1.JSON{Raw: []byte(`{"db":{"password":"` + marker + `","port":5432,"hosts":["` + marker + `"],"unset":null}}`)}}},
			{Name: "oci", Helm: &v1alpha1.HelmStep{Release: "o", Namespace: "n", Chart: "oci://bot:" + marker + "@127.0.0.1:5000/c", Version: "1"}},
			{Name: "secret", Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{Secret: &v1alpha1.ObjectKeyRef{Name: "web-secret", Key: "values.yaml"}}}},
			{Name: "values-from", Helm: &v1alpha1.HelmStep{Release: "v", Namespace: "n", Chart: "c", Repo: "https://charts.example.com",
				ValuesFrom: []v1alpha1.ValuesReference{{Kind: "Secret", Name: "db-values"}},
				Values:     &apiextensionsv1.JSON{Raw: []byte(`{"password":"` + marker + `"}`)}}},
			{Name: "freeze", Freeze: &v1alpha1.FreezeStep{Rules: []v1alpha1.FreezeRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Operations: []string{"CREATE"}}},
				Message: "frozen; see https://bot:" + marker + "@wiki.example.com/upgrade"}},
		},
		Gates: []v1alpha1.Gate{{HTTP: &v1alpha1.HTTPGate{URL: "http://u:" + marker + "@127.0.0.1/healthz?token=" + marker}},
			{Metric: &v1alpha1.Metric{Name: "errors", Provider: v1alpha1.MetricProvider{Prometheus: &v1alpha1.PrometheusMetric{Address: "http://u:" + marker + "@127.0.0.1:9090", Query: "up"}}}},
			{Metric: &v1alpha1.Metric{Name: "web", Provider: v1alpha1.MetricProvider{Web: &v1alpha1.WebMetric{URL: "https://127.0.0.1/health?token=" + marker}}}}},
	}}}
}

func TestPlanSpecHidesEverySecret(t *testing.T) {
	spec := secretPlan()
	orig := mustJSON(t, spec)
	got := PlanSpec(spec)
	shown := mustJSON(t, got)
	if strings.Contains(shown, marker) {
		t.Errorf("PlanSpec shows the secret:\n%s", shown)
	}
	if mustJSON(t, spec) != orig {
		t.Error("PlanSpec changed its argument")
	}

	steps := got.Stages[0].Steps
	inline := spec.Stages[0].Steps[1].Manifests.Inline
	sum := sha256.Sum256([]byte(inline))
	if want := "<inline, " + strconv.Itoa(len(inline)) + " bytes, sha256:" + hex.EncodeToString(sum[:]) + ">"; steps[1].Manifests.Inline != want {
		t.Errorf("inline source shown as %q, want %q", steps[1].Manifests.Inline, want)
	}
	for name, c := range map[string]string{
		"crds":         steps[0].CRDs.Inline,
		"job":          steps[3].Job.Inline,
		"recreate":     steps[4].Recreate.From.Inline,
		"rollback job": steps[3].Job.RollbackJob.URL,
		"url":          steps[2].Manifests.URL,
		"repo":         steps[5].Helm.Repo,
		"oci":          steps[6].Helm.Chart,
		"gate":         got.Stages[0].Gates[0].HTTP.URL,
		"metric":       got.Stages[0].Gates[1].Metric.Provider.Prometheus.Address,
		"web metric":   got.Stages[0].Gates[2].Metric.Provider.Web.URL,
		"freeze":       steps[9].Freeze.Message,
	} {
		if c == "" || strings.Contains(c, marker) {
			t.Errorf("%s shown as %q", name, c)
		}
	}
	var values map[string]any
	if err := yaml.Unmarshal(steps[5].Helm.Values.Raw, &values); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"db": map[string]any{"hosts": []any{Hidden}, "password": Hidden, "port": Hidden, "unset": nil}}
	if !reflect.DeepEqual(values, want) {
		t.Errorf("values shown as %v, want %v (keys kept, values hidden)", values, want)
	}
	// A ConfigMap's or Secret's name and key say where the content is, not
	// what: shown as written (the content lives only in the run's sources,
	// Secrets of their own, and in no message).
	if ref := steps[7].Manifests.Secret; ref == nil || *ref != (v1alpha1.ObjectKeyRef{Name: "web-secret", Key: "values.yaml"}) {
		t.Errorf("secret source shown as %+v", ref)
	}
	if vf := steps[8].Helm.ValuesFrom; len(vf) != 1 || vf[0] != (v1alpha1.ValuesReference{Kind: "Secret", Name: "db-values"}) {
		t.Errorf("valuesFrom shown as %+v", vf)
	}
	if v := string(steps[8].Helm.Values.Raw); v != mustJSON(t, map[string]string{"password": Hidden}) {
		t.Errorf("values beside valuesFrom shown as %s", v)
	}
	if steps[5].Helm.ValuesFiles[0] != "values.yaml" {
		t.Errorf("valuesFiles paths are not secret, shown as %v", steps[5].Helm.ValuesFiles)
	}
}

// A plan redacted already (as a run record keeps it) is shown as it is:
// an inline source keeps its own size and digest, not the placeholder's.
func TestPlanSpecOfARedactedPlanChangesNothing(t *testing.T) {
	once := PlanSpec(secretPlan())
	if twice := PlanSpec(once); mustJSON(t, twice) != mustJSON(t, once) {
		t.Errorf("redacting a redacted plan changed it:\n%s\nwas\n%s", mustJSON(t, twice), mustJSON(t, once))
	}
	if st := RunStatus(RunStatus(v1alpha1.RunStatus{Message: "GET http://u:p@h/x?t=1 failed"})); st.Message != "GET http://xxxxx@h/x?xxxxx failed" {
		t.Errorf("redacting a redacted message gave %q", st.Message)
	}
}

func TestRunHidesSpecAndMessages(t *testing.T) {
	r := &v1alpha1.UpgradeRun{ObjectMeta: metav1.ObjectMeta{Name: "x"}}
	r.Spec.Plan = secretPlan()
	url := "http://u:" + marker + "@127.0.0.1/healthz?token=" + marker
	r.Status.Message = "GET " + url + " failed"
	r.Status.Failure = r.Status.Message
	r.Status.Stages = []v1alpha1.StageStatus{{
		Name: "all", Message: url,
		Steps:    []v1alpha1.StepStatus{{Name: "url", Message: `Get "` + url + `": refused`}},
		Gates:    []v1alpha1.StepStatus{{Name: "http " + url, Message: url}},
		Rollback: &v1alpha1.Rollback{Differences: []string{url}},
	}}
	orig := mustJSON(t, r)
	shown := mustJSON(t, Run(r))
	if strings.Contains(shown, marker) {
		t.Errorf("Run shows the secret:\n%s", shown)
	}
	if !strings.Contains(shown, "http://xxxxx@127.0.0.1/healthz?xxxxx") {
		t.Errorf("Run hides more than the credentials:\n%s", shown)
	}
	if mustJSON(t, r) != orig {
		t.Error("Run changed its argument")
	}
	if Run(nil) != nil {
		t.Error("Run(nil) != nil")
	}
	if p := Plan(&v1alpha1.UpgradePlan{Spec: secretPlan()}); strings.Contains(mustJSON(t, p), marker) {
		t.Errorf("Plan shows the secret: %s", mustJSON(t, p))
	}
}
