package recreate_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients/clienttest"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps"
	"github.com/upshift-dev/upshift/internal/steps/recreate"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func gatewayYAML(ns string, replicas int, image string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: gateway, namespace: %s, labels: {app: gateway}}
spec:
  replicas: %d
  selector: {matchLabels: {app: gateway}}
  template:
    metadata: {labels: {app: gateway}}
    spec:
      containers: [{name: gateway, image: %s}]
`, ns, replicas, image)
}

// tenants creates namespaces PREFIX-tenant-a and PREFIX-tenant-b and
// returns the pattern that matches both.
func tenants(t *testing.T, e *clienttest.Env) (pattern string, nss []string) {
	t.Helper()
	prefix := clienttest.Name(t)
	if len(prefix) > 40 {
		prefix = prefix[len(prefix)-40:]
	}
	prefix = strings.Trim(prefix, "-")
	for _, s := range []string{"a", "b"} {
		ns := prefix + "-tenant-" + s
		if _, err := e.Clientset.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.Cleanup(t, func(ctx context.Context) error {
			return e.Clientset.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		})
		nss = append(nss, ns)
	}
	return prefix + "-tenant-*", nss
}

func apply(t *testing.T, e *clienttest.Env, y string) {
	t.Helper()
	for _, o := range clienttest.Objects(t, y) {
		if _, err := e.Applier.Apply(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
}

func waitCurrent(t *testing.T, e *clienttest.Env, y string) {
	t.Helper()
	for _, o := range clienttest.Objects(t, y) {
		if err := waitFor(e, o); err != nil {
			t.Fatal(err)
		}
	}
}

func waitFor(e *clienttest.Env, o *unstructured.Unstructured) error {
	ref := step.Ref{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName()}
	_, err := e.Waiter.WaitCurrent(context.Background(), objectRef(ref), time.Minute)
	return err
}

// podUIDs are the UIDs of the running (not terminating) pods of a
// namespace with app=gateway.
func podUIDs(t *testing.T, e *clienttest.Env, ns string) map[types.UID]bool {
	t.Helper()
	list, err := e.Clientset.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=gateway"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[types.UID]bool{}
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out[p.UID] = true
		}
	}
	return out
}

func newStep(t *testing.T, e *clienttest.Env, spec v1alpha1.RecreateStep, from string, started time.Time, timeout time.Duration) step.Executor {
	t.Helper()
	var objs []*unstructured.Unstructured
	if from != "" {
		objs = clienttest.Objects(t, from)
	}
	// Built the way the runner builds it.
	ex, err := steps.New(steps.Input{Spec: v1alpha1.Step{Name: "recreate", Recreate: &spec}, Objects: objs, Timeout: timeout, Started: started}, e.Set)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// Pods of a Deployment in two tenant namespaces are deleted and come back
// through their ReplicaSets; run again (a resume) re-creates nothing.
func TestRecreatePodsThroughTheirOwners(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	ctx := context.Background()
	pattern, nss := tenants(t, e)
	before := map[types.UID]bool{}
	for _, ns := range nss {
		apply(t, e, gatewayYAML(ns, 2, "registry.example/gw:v1"))
	}
	for _, ns := range nss {
		waitCurrent(t, e, gatewayYAML(ns, 2, "registry.example/gw:v1"))
		for uid := range podUIDs(t, e, ns) {
			before[uid] = true
		}
	}
	if len(before) != 4 {
		t.Fatalf("want 4 gateway pods before, have %d", len(before))
	}
	// creationTimestamp has whole seconds: start the step in a second of
	// its own, so that what it re-creates is told apart from what was
	// there on a resume.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	started := time.Now().Truncate(time.Second).Add(-time.Nanosecond)
	ex := newStep(t, e, v1alpha1.RecreateStep{APIVersion: "v1", Kind: "Pod", Namespace: pattern, Selector: "app=gateway"}, "", started, time.Minute)
	if refs, err := ex.Targets(ctx); err != nil || len(refs) != 0 {
		t.Errorf("Targets = %v, %v; want none (owners re-create the pods)", refs, err)
	}
	res, err := ex.Run(ctx)
	if err != nil || res.Status != step.Succeeded {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	want := fmt.Sprintf("re-created pods matching app=gateway in %s, %s (4 by their owners), all Current", nss[0], nss[1])
	if res.Message != want {
		t.Errorf("message = %q\nwant      %q", res.Message, want)
	}
	after := map[types.UID]bool{}
	for _, ns := range nss {
		uids := podUIDs(t, e, ns)
		if len(uids) != 2 {
			t.Errorf("%s: %d gateway pods after, want 2", ns, len(uids))
		}
		for uid := range uids {
			if before[uid] {
				t.Errorf("%s: pod %s was not re-created", ns, uid)
			}
			after[uid] = true
		}
	}

	// A resumed step (same start) finds everything re-created already.
	res, err = newStep(t, e, v1alpha1.RecreateStep{APIVersion: "v1", Kind: "Pod", Namespace: pattern, Selector: "app=gateway"}, "", started, time.Minute).Run(ctx)
	if err != nil || res.Status != step.Succeeded || !strings.Contains(res.Message, "already re-created") {
		t.Fatalf("second Run = %+v, %v; want Succeeded, already re-created", res, err)
	}
	for _, ns := range nss {
		for uid := range podUIDs(t, e, ns) {
			if !after[uid] {
				t.Errorf("%s: the second run re-created pod %s again", ns, uid)
			}
		}
	}
}

// A Deployment no one owns is deleted and applied again from `from`, with
// the new version's manifest.
func TestRecreateFromManifests(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	ctx := context.Background()
	apply(t, e, gatewayYAML(e.NS, 1, "registry.example/gw:v1"))
	waitCurrent(t, e, gatewayYAML(e.NS, 1, "registry.example/gw:v1"))
	old, err := e.Applier.Get(ctx, step.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: e.NS, Name: "gateway"})
	if err != nil {
		t.Fatal(err)
	}
	from := gatewayYAML(e.NS, 1, "registry.example/gw:v2")
	ex := newStep(t, e, v1alpha1.RecreateStep{APIVersion: "apps/v1", Kind: "Deployment", Namespace: e.NS, Selector: "app=gateway"}, from, time.Now(), time.Minute)
	refs, err := ex.Targets(ctx)
	if err != nil || fmt.Sprint(refs) != fmt.Sprintf("[deployment %s/gateway]", e.NS) {
		t.Errorf("Targets = %v, %v; want the from Deployment", refs, err)
	}
	res, err := ex.Run(ctx)
	if err != nil || res.Status != step.Succeeded || !strings.Contains(res.Message, "(1 from manifests)") {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	cur, err := e.Applier.Get(ctx, step.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: e.NS, Name: "gateway"})
	if err != nil {
		t.Fatal(err)
	}
	if cur.GetUID() == old.GetUID() {
		t.Errorf("the Deployment was not re-created (same UID)")
	}
	c, _, _ := unstructured.NestedSlice(cur.Object, "spec", "template", "spec", "containers")
	if img := c[0].(map[string]any)["image"]; img != "registry.example/gw:v2" {
		t.Errorf("image = %v, want the from manifest's v2", img)
	}
}

// Annotate mode sets the annotation once; a resumed step patches nothing.
func TestRecreateAnnotate(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	ctx := context.Background()
	apply(t, e, gatewayYAML(e.NS, 1, "registry.example/gw:v1"))
	waitCurrent(t, e, gatewayYAML(e.NS, 1, "registry.example/gw:v1"))
	started := time.Now()
	spec := v1alpha1.RecreateStep{APIVersion: "apps/v1", Kind: "Deployment", Namespace: e.NS, Selector: "app=gateway", Mode: "annotate"}
	res, err := newStep(t, e, spec, "", started, time.Minute).Run(ctx)
	if err != nil || res.Status != step.Succeeded || !strings.Contains(res.Message, "annotated 1 deployments") || !strings.Contains(res.Message, "0 already had it") {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	cur, err := e.Applier.Get(ctx, step.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: e.NS, Name: "gateway"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cur.GetAnnotations()[recreate.Annotation], started.UTC().Format(time.RFC3339); got != want {
		t.Errorf("annotation = %q, want %q", got, want)
	}
	res, err = newStep(t, e, spec, "", started, time.Minute).Run(ctx)
	if err != nil || !strings.Contains(res.Message, "1 already had it") {
		t.Fatalf("second Run = %+v, %v; want nothing patched", res, err)
	}
}

// A pod whose owner does nothing (its operator is not running) does not
// come back: the step fails at its timeout, saying what it waited for.
func TestRecreateObjectsThatDoNotComeBack(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	ctx := context.Background()
	cm, err := e.Clientset.CoreV1().ConfigMaps(e.NS).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "operator-state"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "gateway-0", Labels: map[string]string{"app": "gateway"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID, Controller: &yes}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "gateway", Image: "registry.example/gw:v1"}}},
	}
	if _, err := e.Clientset.CoreV1().Pods(e.NS).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ex := newStep(t, e, v1alpha1.RecreateStep{APIVersion: "v1", Kind: "Pod", Namespace: e.NS, Selector: "app=gateway"}, "", time.Now(), 4*time.Second)
	res, err := ex.Run(ctx)
	if err != nil || res.Status != step.Failed {
		t.Fatalf("Run = %+v, %v; want Failed", res, err)
	}
	want := fmt.Sprintf("pods matching app=gateway not back: timed out after 4s: %s: 0 of 1 pods matching app=gateway back and Current", e.NS)
	if !strings.HasPrefix(res.Message, want) {
		t.Errorf("message = %q\nwant prefix %q", res.Message, want)
	}
}

// A bare pod no owner would bring back is refused before anything is
// deleted; nothing matched is a success that says so.
func TestRecreateRefusesOrphansAndAcceptsNothing(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "bare", Labels: map[string]string{"app": "gateway"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "gateway", Image: "registry.example/gw:v1"}}},
	}
	created, err := e.Clientset.CoreV1().Pods(e.NS).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := newStep(t, e, v1alpha1.RecreateStep{APIVersion: "v1", Kind: "Pod", Namespace: e.NS, Selector: "app=gateway"}, "", time.Now(), time.Minute).Run(ctx)
	want := fmt.Sprintf("nothing deleted: pod %s/bare would not come back", e.NS)
	if err != nil || res.Status != step.Failed || !strings.HasPrefix(res.Message, want) {
		t.Fatalf("Run = %+v, %v; want Failed %q", res, err, want)
	}
	if p, err := e.Clientset.CoreV1().Pods(e.NS).Get(ctx, "bare", metav1.GetOptions{}); err != nil || p.UID != created.UID || p.DeletionTimestamp != nil {
		t.Errorf("the bare pod was touched: %v", err)
	}

	res, err = newStep(t, e, v1alpha1.RecreateStep{APIVersion: "v1", Kind: "Pod", Namespace: "no-such-tenant-*", Selector: "app=gateway"}, "", time.Now(), time.Minute).Run(ctx)
	if err != nil || res != step.Success("nothing matched: no pods matching app=gateway in namespaces no-such-tenant-*") {
		t.Errorf("Run on nothing = %+v, %v", res, err)
	}
}
