package runstore

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/chunks"
	"github.com/upshift-dev/upshift/internal/redact"
)

// The runner writes a run's sources once, before its record, and then
// saves the record on every transition: the record stays small (no
// source in it), the sources come back intact, and writing the same
// sources again writes nothing.
func TestSourcesKeptApartFromTheRecord(t *testing.T) {
	t.Parallel()
	s, cs, ctx := newStore(t)
	sources := map[string][]byte{
		"spec.stages[0].steps[0].crds.source":      []byte(strings.Repeat("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n", 500)),
		"spec.stages[0].steps[1].manifests.source": []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: hunter2\n"),
		"spec.stages[1].steps[0].helm.chart":       {0x1f, 0x8b, 0x08, 0x00, 0xff, 0xfe},
	}
	run := newRun("demo", "1.1.0", time.Now())
	ref, err := s.SaveSources(ctx, "demo", run.Spec.Plan, sources)
	if err != nil {
		t.Fatal(err)
	}
	run.Spec.Sources = &ref
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		run.Status.Transitions++
		if err := s.Save(ctx, run); err != nil {
			t.Fatalf("save %d: %v", i, err)
		}
	}
	got, err := s.LoadSources(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Sources) != len(sources) || mustJSON(t, got.Plan) != mustJSON(t, run.Spec.Plan) {
		t.Fatalf("LoadSources: %d sources (want %d), plan %s", len(got.Sources), len(sources), mustJSON(t, got.Plan))
	}
	for k, v := range sources {
		if !bytes.Equal(got.Sources[k], v) {
			t.Errorf("source %s = %q, want %q", k, got.Sources[k], v)
		}
	}

	// The record holds the run only; the chunks are immutable and
	// compressed (the CRD text repeats 500 times).
	if b := mustJSON(t, resource(t, ctx, s, "demo").Object); strings.Contains(b, "CustomResourceDefinition") || len(b) > 4096 {
		t.Errorf("the UpgradeRun holds the sources (%d bytes)", len(b))
	}
	if len(ref.Secrets) != 1 || ref.Packed == 0 || ref.Packed > 4096 {
		t.Errorf("sources ref %+v: want one small chunk", ref)
	}
	chunk, err := cs.CoreV1().Secrets(s.Namespace()).Get(ctx, ref.Secrets[0], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if chunk.Immutable == nil || !*chunk.Immutable || chunk.Labels[LabelRun] != "demo" {
		t.Errorf("chunk %s: immutable %v, labels %v", chunk.Name, chunk.Immutable, chunk.Labels)
	}

	// Written again (a run restarted before its record was saved): the
	// same ref, and the chunk is not written again.
	again, err := s.SaveSources(ctx, "demo", run.Spec.Plan, sources)
	if err != nil {
		t.Fatal(err)
	}
	after, err := cs.CoreV1().Secrets(s.Namespace()).Get(ctx, ref.Secrets[0], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.SHA256 != ref.SHA256 || again.Secrets[0] != ref.Secrets[0] || after.ResourceVersion != chunk.ResourceVersion {
		t.Errorf("saving the same sources again: ref %+v (was %+v), chunk version %s (was %s)", again, ref, after.ResourceVersion, chunk.ResourceVersion)
	}
}

// Sources of several MiB, which compress badly, go into several chunks
// and come back intact; an altered chunk is named.
func TestLargeSourcesSpanChunks(t *testing.T) {
	t.Parallel()
	s, cs, ctx := newStore(t)
	noise := make([]byte, 3<<20)
	if _, err := rand.Read(noise); err != nil {
		t.Fatal(err)
	}
	sources := map[string][]byte{"spec.stages[0].steps[0].crds.source": []byte(base64.StdEncoding.EncodeToString(noise))}
	ref, err := s.SaveSources(ctx, "big", v1alpha1.UpgradePlanSpec{Version: "1.0.0"}, sources)
	if err != nil {
		t.Fatal(err)
	}
	if len(ref.Secrets) < 3 {
		t.Fatalf("%d MiB compressed in %d chunk(s), want several", ref.Packed>>20, len(ref.Secrets))
	}
	run := newRun("big", "1.0.0", time.Now())
	run.Spec.Sources = &ref
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadSources(ctx, "big")
	if err != nil || !bytes.Equal(got.Sources["spec.stages[0].steps[0].crds.source"], sources["spec.stages[0].steps[0].crds.source"]) {
		t.Fatalf("LoadSources of %d bytes: %v", ref.Bytes, err)
	}
	// An immutable chunk cannot be altered: replace one by hand.
	victim := ref.Secrets[1]
	if err := cs.CoreV1().Secrets(s.Namespace()).Delete(ctx, victim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	forged := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: victim, Namespace: s.Namespace(), Annotations: map[string]string{
		chunks.AnnotationChunk: "1/" + strconv.Itoa(len(ref.Secrets)), chunks.AnnotationBlobSHA256: ref.SHA256, chunks.AnnotationChunkSHA256: "0"}},
		Type: SourcesSecretType, Data: map[string][]byte{"chunk": []byte("forged")}}
	if _, err := cs.CoreV1().Secrets(s.Namespace()).Create(ctx, forged, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LoadSources(ctx, "big"); !errors.Is(err, chunks.ErrCorrupt) || !strings.Contains(err.Error(), victim) {
		t.Fatalf("LoadSources with an altered chunk = %v; want ErrCorrupt naming %s", err, victim)
	}
}

// The resource holds the plan redacted: whoever may read upgraderuns sees
// no inline source, Helm value or URL credential, in the spec or in a
// status message (records of earlier versions may hold raw URLs); the
// plan as written comes back from LoadSources, and the digests are the
// caller's, untouched.
func TestNoSecretValuesInTheResource(t *testing.T) {
	t.Parallel()
	s, cs, ctx := newStore(t)
	const marker = "s3cr3t-hunter2"
	run := newRun("demo", "1.2.0", time.Now())
	run.Spec.Plan = secretPlan(marker)
	run.Spec.Plan.Stages[0].Gates = []v1alpha1.Gate{{HTTP: &v1alpha1.HTTPGate{URL: "https://user:" + marker + "@example.com/healthz?token=" + marker}}}
	run.Status.Stages = []v1alpha1.StageStatus{{Name: "config", Phase: v1alpha1.PhaseRunning, Message: "GET https://user:" + marker + "@example.com/healthz failed"}}
	want := mustJSON(t, run.Spec.Plan)
	ref, err := s.SaveSources(ctx, "demo", run.Spec.Plan, map[string][]byte{"spec.stages[0].steps[0].manifests": []byte("kind: Secret\nstringData:\n  token: " + marker + "\n")})
	if err != nil {
		t.Fatal(err)
	}
	run.Spec.Sources = &ref
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	run.Status.Phase = v1alpha1.RunFailed
	run.Status.Message = "https://user:" + marker + "@example.com/healthz?token=" + marker + " did not answer"
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	if mustJSON(t, run.Spec.Plan) != want {
		t.Error("Save changed the caller's plan")
	}
	b := mustJSON(t, resource(t, ctx, s, "demo").Object)
	if strings.Contains(b, marker) {
		t.Fatalf("the UpgradeRun holds the secret:\n%s", b)
	}
	for _, part := range []string{"<inline, ", `"token":"<redacted>"`, "xxxxx@example.com"} {
		if !strings.Contains(b, part) {
			t.Errorf("the UpgradeRun lacks %q (the redacted plan):\n%s", part, b)
		}
	}
	got, err := s.Get(ctx, "demo")
	if err != nil || got.Spec.PlanDigest != run.Spec.PlanDigest || mustJSON(t, got.Spec.SourceDigests) != mustJSON(t, run.Spec.SourceDigests) {
		t.Fatalf("Get: %v; digests %s %v", err, got.Spec.PlanDigest, got.Spec.SourceDigests)
	}
	// Printed (redacted again), the inline source shows its own size and
	// digest.
	inline := redact.Inline(run.Spec.Plan.Stages[0].Steps[0].Manifests.Inline)
	if shown := redact.Run(got).Spec.Plan.Stages[0].Steps[0].Manifests.Inline; shown != inline || !strings.Contains(b, inline) {
		t.Errorf("the inline source is shown as %q, want %q", shown, inline)
	}
	saved, err := s.LoadSources(ctx, "demo")
	if err != nil || mustJSON(t, saved.Plan) != want {
		t.Fatalf("LoadSources plan = %s, %v; want the plan as written", mustJSON(t, saved.Plan), err)
	}
	// The chunks do not show it in clear either, nor does any label or
	// annotation.
	for _, name := range ref.Secrets {
		sec, err := cs.CoreV1().Secrets(s.Namespace()).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if meta, _ := json.Marshal(sec.ObjectMeta); strings.Contains(string(meta), marker) {
			t.Errorf("secret value in the metadata of Secret %s: %s", name, meta)
		}
		for k, v := range sec.Data {
			if strings.Contains(string(v), marker) {
				t.Errorf("secret value in clear in data key %s of Secret %s", k, name)
			}
		}
	}
}
