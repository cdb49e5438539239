package runstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/chunks"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// newStore returns a Store in a fresh namespace of the package's cluster.
func newStore(t *testing.T) (*Store, kubernetes.Interface, context.Context) {
	t.Helper()
	c := testenv.Cluster(t)
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	ns := testNamespace(t)
	s := New(cs, ns)
	if err := s.EnsureNamespace(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureNamespace(ctx); err != nil {
		t.Fatalf("EnsureNamespace on an existing namespace: %v", err)
	}
	return s, cs, ctx
}

func newRun(name, version string, started time.Time) *v1alpha1.UpgradeRun {
	st := metav1.NewMicroTime(started)
	return &v1alpha1.UpgradeRun{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.UpgradeRunSpec{
			Plan:          v1alpha1.UpgradePlanSpec{Version: version, Stages: []v1alpha1.Stage{{Name: "crds"}}},
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

	// An update is seen by the next Get, and the Secret tells kubectl users
	// what it is.
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
	secs, err := cs.CoreV1().Secrets(s.Namespace()).List(ctx, metav1.ListOptions{LabelSelector: LabelRun})
	if err != nil {
		t.Fatal(err)
	}
	if len(secs.Items) != 1 {
		t.Fatalf("kubectl get secret -l %s would list %d secrets, want 1", LabelRun, len(secs.Items))
	}
	sec := secs.Items[0]
	if sec.Name != "upshift-run-demo-1.1.0" || sec.Type != SecretType {
		t.Errorf("secret %s of type %s", sec.Name, sec.Type)
	}
	if sec.Labels[LabelRun] != "demo-1.1.0" || sec.Labels[LabelManagedBy] != "upshift" {
		t.Errorf("labels %v", sec.Labels)
	}
	if sec.Annotations[AnnotationPhase] != "Succeeded" || sec.Annotations[AnnotationPlanVersion] != "1.1.0" {
		t.Errorf("annotations %v", sec.Annotations)
	}
	var stored v1alpha1.UpgradeRun
	if err := json.Unmarshal(sec.Data[keySpec], &stored); err != nil || stored.Name != "demo-1.1.0" || stored.ResourceVersion != "" {
		t.Errorf("%s: name %q resourceVersion %q (%v)", keySpec, stored.Name, stored.ResourceVersion, err)
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
	ref, err := s.SaveSources(ctx, "demo", sources)
	if err != nil {
		t.Fatal(err)
	}
	run := newRun("demo", "1.1.0", time.Now())
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
	if len(got) != len(sources) {
		t.Fatalf("LoadSources: %d sources, want %d", len(got), len(sources))
	}
	for k, v := range sources {
		if !bytes.Equal(got[k], v) {
			t.Errorf("source %s = %q, want %q", k, got[k], v)
		}
	}

	// The record holds the run only; the chunks are immutable and
	// compressed (the CRD text repeats 500 times).
	sec, err := cs.CoreV1().Secrets(s.Namespace()).Get(ctx, SecretName("demo"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k := range sec.Data {
		if k != keySpec && k != keyStatus && !strings.HasPrefix(k, stagePrefix) {
			t.Errorf("the record's Secret holds key %s: it keeps the run only", k)
		}
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
	again, err := s.SaveSources(ctx, "demo", sources)
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
	ref, err := s.SaveSources(ctx, "big", sources)
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
	if err != nil || !bytes.Equal(got["spec.stages[0].steps[0].crds.source"], sources["spec.stages[0].steps[0].crds.source"]) {
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

// A record written before sources had chunks of their own keeps them in
// its Secret; they still load.
func TestLegacySourcesInTheRecordLoad(t *testing.T) {
	t.Parallel()
	s, cs, ctx := newStore(t)
	if err := s.Save(ctx, newRun("old", "1.0.0", time.Now())); err != nil {
		t.Fatal(err)
	}
	raw, err := encodeSources(map[string][]byte{"a": []byte("b")})
	if err != nil {
		t.Fatal(err)
	}
	gz, err := chunks.Pack(raw)
	if err != nil {
		t.Fatal(err)
	}
	patch, _ := json.Marshal(map[string]any{"data": map[string][]byte{legacyKeySources: gz}})
	if _, err := cs.CoreV1().Secrets(s.Namespace()).Patch(ctx, SecretName("old"), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadSources(ctx, "old")
	if err != nil || string(got["a"]) != "b" {
		t.Fatalf("legacy LoadSources = %v, %v", got, err)
	}
}

// Source contents may be Secret manifests: they must show in no label or
// annotation, and not in clear in the Secret's data either.
func TestSecretValuesNeverInAnnotations(t *testing.T) {
	t.Parallel()
	s, cs, ctx := newStore(t)
	const secret = "s3cr3t-hunter2"
	ref, err := s.SaveSources(ctx, "demo", map[string][]byte{"spec.stages[0].steps[0].manifests.source": []byte("kind: Secret\nstringData:\n  token: " + secret + "\n")})
	if err != nil {
		t.Fatal(err)
	}
	run := newRun("demo", "1.2.0", time.Now())
	run.Spec.Sources = &ref
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	run.Status.Phase = v1alpha1.RunFailed
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	for _, name := range append([]string{SecretName("demo")}, ref.Secrets...) {
		sec, err := cs.CoreV1().Secrets(s.Namespace()).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		meta, _ := json.Marshal(sec.ObjectMeta)
		if strings.Contains(string(meta), secret) {
			t.Fatalf("secret value in the metadata of Secret %s: %s", name, meta)
		}
		for k, v := range sec.Data {
			if strings.Contains(string(v), secret) {
				t.Errorf("secret value in clear in data key %s of Secret %s", k, name)
			}
		}
	}
	sec, err := cs.CoreV1().Secrets(s.Namespace()).Get(ctx, SecretName("demo"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k := range sec.Annotations {
		switch k {
		case AnnotationPhase, AnnotationPlanVersion, annotationRunVersion:
		default:
			t.Errorf("unexpected annotation %s=%q", k, sec.Annotations[k])
		}
	}
	if sec.Annotations[AnnotationPhase] != "Failed" {
		t.Errorf("phase annotation %q after SaveSources and Save, want Failed", sec.Annotations[AnnotationPhase])
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
	// A foreign Secret with the label is no run.
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "not-a-run", Namespace: s.Namespace(), Labels: map[string]string{LabelRun: "x"}}, StringData: map[string]string{"k": "v"}}
	if _, err := cs.CoreV1().Secrets(s.Namespace()).Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
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
	if got := strings.Join(names, " "); got != "first second third pending" {
		t.Fatalf("List = %s, want first second third pending", got)
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
	ref, err := s.SaveSources(ctx, "drop", map[string][]byte{"a": []byte("b")})
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
	// The name is free again.
	if err := s.Save(ctx, newRun("drop", "2.0.0", time.Now())); err != nil {
		t.Fatalf("create after Delete: %v", err)
	}
}

// A run name longer than a Secret name allows still round-trips.
func TestLongRunName(t *testing.T) {
	t.Parallel()
	s, cs, ctx := newStore(t)
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
	secs, err := cs.CoreV1().Secrets(s.Namespace()).List(ctx, metav1.ListOptions{LabelSelector: LabelRun + "=" + labelValue(name)})
	if err != nil || len(secs.Items) != 1 {
		t.Fatalf("selecting the run by label: %d secrets, %v", len(secs.Items), err)
	}
}

// Saving into a namespace that does not exist says so.
func TestSaveWithoutNamespace(t *testing.T) {
	t.Parallel()
	c := testenv.Cluster(t)
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := New(cs, "runs-never-created")
	start := time.Now()
	err = s.Save(ctx, newRun("demo", "1.0.0", time.Now()))
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

// A save after a transition sends the status and the stages that changed,
// not the plan: the record's writes stay small however big the plan is.
func TestSaveSendsOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	c := testenv.Cluster(t)
	var mu sync.Mutex
	var patches []string
	cfg := c.RESTConfig()
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTrip(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPatch && r.GetBody != nil {
				if b, err := r.GetBody(); err == nil {
					body, _ := io.ReadAll(b)
					mu.Lock()
					patches = append(patches, string(body))
					mu.Unlock()
				}
			}
			return rt.RoundTrip(r)
		})
	})
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := New(cs, testNamespace(t))
	if err := s.EnsureNamespace(ctx); err != nil {
		t.Fatal(err)
	}
	run := newRun("big-plan", "1.0.0", time.Now())
	// A plan of 40 stages with long messages in its spec.
	for i := 0; i < 40; i++ {
		run.Spec.Plan.Stages = append(run.Spec.Plan.Stages, v1alpha1.Stage{Name: fmt.Sprintf("stage-%d", i),
			Steps: []v1alpha1.Step{{Name: "s", Approval: &v1alpha1.ApprovalStep{Message: strings.Repeat("read the runbook first. ", 20)}}}})
		run.Status.Stages = append(run.Status.Stages, v1alpha1.StageStatus{Name: fmt.Sprintf("stage-%d", i), Phase: v1alpha1.PhasePending})
	}
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		run.Status.Transitions++
		run.Status.Stages[i].Phase = v1alpha1.PhaseSucceeded
		if err := s.Save(ctx, run); err != nil {
			t.Fatalf("save %d: %v", i, err)
		}
	}
	mu.Lock()
	sent := append([]string(nil), patches...)
	mu.Unlock()
	if len(sent) != 3 {
		t.Fatalf("%d patches, want 3", len(sent))
	}
	for i, p := range sent {
		if strings.Contains(p, keySpec) || len(p) > 2048 || !strings.Contains(p, stageKey(i)) {
			t.Errorf("save %d sent %d bytes (spec included: %v); want the status and stage %d only", i, len(p), strings.Contains(p, keySpec), i)
		}
	}
	// Read back whole, and a copy read elsewhere saves whole again.
	got, err := s.Get(ctx, "big-plan")
	if err != nil || len(got.Status.Stages) != len(run.Status.Stages) || got.Status.Stages[2].Phase != v1alpha1.PhaseSucceeded || got.Status.Transitions != run.Status.Transitions {
		t.Fatalf("Get after partial saves: %v; %d stages, stage 2 %s, transitions %d (want %d)", err, len(got.Status.Stages), got.Status.Stages[2].Phase, got.Status.Transitions, run.Status.Transitions)
	}
	other := New(cs, s.Namespace())
	got.Status.Message = "from another process"
	if err := other.Save(ctx, got); err != nil {
		t.Fatalf("save by another Store: %v", err)
	}
	if again, err := s.Get(ctx, "big-plan"); err != nil || again.Status.Message != "from another process" || len(again.Status.Stages) != len(run.Status.Stages) {
		t.Fatalf("Get after another Store's save: %v", err)
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
