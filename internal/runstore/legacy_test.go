package runstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/chunks"
)

// encodeLegacy is the encoder of the records of the previous version (a
// Secret per run: spec.json, status.json, stage-NNN.json), kept here only
// to write such records in tests.
func encodeLegacy(run *v1alpha1.UpgradeRun) map[string][]byte {
	c := *run
	c.ObjectMeta = metav1.ObjectMeta{Name: run.Name}
	c.APIVersion, c.Kind = v1alpha1.APIVersion, v1alpha1.RunKind
	status := c.Status
	status.Stages = nil
	c.Status = v1alpha1.RunStatus{}
	out := map[string][]byte{}
	out[keySpec], _ = json.Marshal(&c)
	out[keyStatus], _ = json.Marshal(&status)
	for i := range run.Status.Stages {
		out[stageKey(i)], _ = json.Marshal(&run.Status.Stages[i])
	}
	return out
}

// writeLegacy writes run as the previous version did; extra keys join the
// record's data.
func writeLegacy(t *testing.T, ctx context.Context, cs kubernetes.Interface, namespace string, run *v1alpha1.UpgradeRun, extra ...map[string][]byte) *corev1.Secret {
	t.Helper()
	data := encodeLegacy(run)
	for _, e := range extra {
		for k, v := range e {
			data[k] = v
		}
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: SecretName(run.Name), Namespace: namespace, Labels: labelsFor(run.Name),
			Annotations: map[string]string{"upshift.dev/phase": string(run.Status.Phase), "upshift.dev/plan-version": run.Spec.Plan.Version}},
		Type: SecretType,
		Data: data,
	}
	out, err := cs.CoreV1().Secrets(namespace).Create(ctx, sec, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// List reads these records from the API server's cache, which
	// follows etcd by a moment: the record written by an earlier version
	// was there long before the run that lists it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		cached, err := cs.CoreV1().Secrets(namespace).List(ctx, metav1.ListOptions{ResourceVersion: "0", FieldSelector: "metadata.name=" + sec.Name})
		if err == nil && len(cached.Items) == 1 && cached.Items[0].ResourceVersion == out.ResourceVersion {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("secret %s not in the API server's cache after 10 s", sec.Name)
		}
	}
	return out
}

// secretPlan is a plan with marker in an inline source and a Helm value.
func secretPlan(marker string) v1alpha1.UpgradePlanSpec {
	return v1alpha1.UpgradePlanSpec{Version: "1.0.0", Stages: []v1alpha1.Stage{{Name: "config", Steps: []v1alpha1.Step{
		{Name: "creds", Manifests: &v1alpha1.ManifestsStep{Source: v1alpha1.Source{Inline: "kind: Secret\nstringData: {password: " + marker + "}\n"}}},
		{Name: "addon", Helm: &v1alpha1.HelmStep{Release: "addon", Namespace: "n", Chart: "addon", Values: &apiextensionsv1.JSON{Raw: []byte(`{"token":"` + marker + `"}`)}}},
	}}}}
}

// A record of the previous version, whose sources' chunks hold no plan,
// is read by Get and LoadSources as it was written; its first save writes
// it as an UpgradeRun (the plan redacted there, and kept as written with
// the sources) and deletes the Secret; a copy read before is stale.
func TestLegacyRecordMovesToAnUpgradeRun(t *testing.T) {
	t.Parallel()
	s, cs, ctx := newStore(t)
	marker := "s3cr3t-legacy"
	run := newRun("old", "1.0.0", time.Now())
	run.Spec.Plan = secretPlan(marker)
	sources := map[string][]byte{"spec.stages[0].steps[0].manifests": []byte("kind: Secret\nstringData: {password: " + marker + "}\n")}
	raw, err := json.Marshal(map[string]any{"text": map[string]string{"spec.stages[0].steps[0].manifests": string(sources["spec.stages[0].steps[0].manifests"])}})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := chunks.New(cs, s.Namespace(), SourcesSecretType).Write(ctx, "upshift-src-old", labelsFor("old"), raw) // as the previous version wrote them
	if err != nil {
		t.Fatal(err)
	}
	run.Spec.Sources = &ref
	writeLegacy(t, ctx, cs, s.Namespace(), run)

	got, err := s.Get(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	if content(t, got) != content(t, run) || got.ResourceVersion == "" {
		t.Fatalf("Get of a record of the previous version = %s\nwant %s", content(t, got), content(t, run))
	}
	stale := got.DeepCopy()
	loaded, err := s.LoadSources(ctx, "old")
	if err != nil || !bytes.Equal(loaded.Sources["spec.stages[0].steps[0].manifests"], sources["spec.stages[0].steps[0].manifests"]) || !strings.Contains(mustJSON(t, loaded.Plan), marker) {
		t.Fatalf("LoadSources of a record of the previous version = %+v, %v", loaded, err)
	}

	got.Status.Message = "resumed"
	if err := s.Save(ctx, got); err != nil {
		t.Fatalf("first save of a record of the previous version: %v", err)
	}
	if _, err := cs.CoreV1().Secrets(s.Namespace()).Get(ctx, SecretName("old"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the record's Secret is still there after the save: %v", err)
	}
	u := resource(t, ctx, s, "old")
	if b, _ := json.Marshal(u.Object); strings.Contains(string(b), marker) {
		t.Errorf("the UpgradeRun holds the secret:\n%s", b)
	}
	again, err := s.Get(ctx, "old")
	if err != nil || again.Status.Message != "resumed" || again.Spec.PlanDigest != run.Spec.PlanDigest || len(again.Status.Stages) != 1 {
		t.Fatalf("Get after the move = %+v, %v", again, err)
	}
	loaded, err = s.LoadSources(ctx, "old")
	if err != nil || !bytes.Equal(loaded.Sources["spec.stages[0].steps[0].manifests"], sources["spec.stages[0].steps[0].manifests"]) || mustJSON(t, loaded.Plan) != mustJSON(t, run.Spec.Plan) {
		t.Fatalf("LoadSources after the move = %+v, %v; want the plan as written and the sources", loaded, err)
	}
	if err := s.Save(ctx, stale); !errors.Is(err, ErrConflict) {
		t.Errorf("save of a copy read before the move = %v, want ErrConflict", err)
	}
	runs, err := s.List(ctx)
	if err != nil || len(runs) != 1 || runs[0].Status.Message != "resumed" {
		t.Fatalf("List after the move = %v, %v", runs, err)
	}
}

// A record written before sources had chunks of their own keeps them in
// its Secret; they still load, and move with the record.
func TestLegacySourcesInTheRecordLoad(t *testing.T) {
	t.Parallel()
	s, cs, ctx := newStore(t)
	raw, err := json.Marshal(map[string]any{"text": map[string]string{"a": "b"}})
	if err != nil {
		t.Fatal(err)
	}
	gz, err := chunks.Pack(raw)
	if err != nil {
		t.Fatal(err)
	}
	writeLegacy(t, ctx, cs, s.Namespace(), newRun("old", "1.0.0", time.Now()), map[string][]byte{legacyKeySources: gz})
	got, err := s.LoadSources(ctx, "old")
	if err != nil || string(got.Sources["a"]) != "b" || got.Plan.Version != "1.0.0" {
		t.Fatalf("legacy LoadSources = %+v, %v", got, err)
	}
	run, err := s.Get(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	run.Status.Transitions++
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	got, err = s.LoadSources(ctx, "old")
	if err != nil || string(got.Sources["a"]) != "b" || got.Plan.Version != "1.0.0" {
		t.Fatalf("LoadSources after the move = %+v, %v", got, err)
	}
	if run.Spec.Sources == nil {
		t.Error("the moved run names no sources")
	}
}

// mustJSON is v as JSON, "<" and ">" as they are.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(b.String())
}
