package controller_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// approvalCatalog is a catalog of the web platform (1.0 to 1.1) whose
// hop waits at an approval step between its config and its image.
func (e *env) approvalCatalog(name string) {
	e.t.Helper()
	tmpl := strings.ReplaceAll(`apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: "web-{{ .Version }}"}
spec:
  version: "{{ .Version }}"
  stages:
  - name: config
    steps:
    - name: config
      manifests:
        inline: |
          apiVersion: v1
          kind: ConfigMap
          metadata: {name: web-config, namespace: NS}
          data: {version: "{{ .Tag }}"}
  - name: check
    steps:
    - {name: go-ahead, approval: {}}
  - name: app
    steps:
    - name: app
      image: {kind: Deployment, namespace: NS, name: web, images: {web: "example.com/web:{{ .Tag }}"}}
`, "NS", e.ns)
	cat := strings.ReplaceAll(`apiVersion: upshift.dev/v1alpha1
kind: ReleaseCatalog
metadata: {name: web}
spec:
  detect:
  - image: {kind: Deployment, namespace: NS, name: web}
  planTemplate: plan.tmpl
  releases:
  - {version: "1.0"}
  - {version: "1.1"}
`, "NS", e.ns)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"catalog.yaml": cat, "plan.tmpl": tmpl}}
	if _, err := e.cs.CoreV1().ConfigMaps(e.ns).Create(e.ctx, cm, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// waitPlatformCondition waits until the upgrade's Ready condition has
// reason, at its generation.
func (e *env) waitPlatformCondition(name, reason string, timeout time.Duration) *v1alpha1.PlatformUpgrade {
	e.t.Helper()
	var pu *v1alpha1.PlatformUpgrade
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		pu = e.getPlatformUpgrade(name)
		c := meta.FindStatusCondition(pu.Status.Conditions, v1alpha1.ConditionReady)
		if c != nil && c.Reason == reason && pu.Status.ObservedGeneration == pu.Generation {
			return pu
		}
	}
	e.t.Fatalf("PlatformUpgrade %s: Ready is not %s after %s; status:\n%s", name, reason, timeout, toYAML(pu.Status))
	return nil
}

// A PlatformUpgrade resumes only hops it started: tenant B's upgrade of
// the same catalog leaves tenant A's suspended hop alone (queued behind
// it, never driving it as B's ServiceAccount), and an operator's abort is
// not undone by an edit of the upgrade, only by its retry.
func TestPlatformUpgradeResumesOnlyItsOwnHops(t *testing.T) {
	t.Parallel()
	a := newEnv(t)
	b := a.tenant("ctl-pb")
	for _, e := range []*env{a, b} {
		e.installWeb()
		e.grant("upgrader")
		e.approvalCatalog("web-catalog")
	}
	a.startController("ctl-platform-tenants", nil, "--watch-namespaces", b.ns)

	a.createPlatformUpgrade("web", "1.1", "web-catalog", "upgrader")
	waitFor(t, "A's hop waiting at its approval", func() bool {
		h := a.getPlatformUpgrade("web").Status.Hops
		return len(h) == 1 && h[0].Phase == v1alpha1.RunRunning && strings.Contains(a.webConfig(), "1.1")
	})
	runA := a.getPlatformUpgrade("web").Status.Hops[0].Run
	if out, err := a.kubectl("patch", "platformupgrade", "web", "-n", a.ns, "--type=merge", "-p", `{"spec":{"suspend":true}}`); err != nil {
		t.Fatalf("suspend A: %v\n%s", err, out)
	}
	waitFor(t, "A suspended", func() bool {
		c := meta.FindStatusCondition(a.getPlatformUpgrade("web").Status.Conditions, v1alpha1.ConditionReady)
		return c != nil && c.Reason == v1alpha1.ReasonSuspended
	})

	// B is queued behind A's unfinished hop. A queued upgrade is tried
	// again every 10 s: after that, it must still not have taken A's hop.
	b.createPlatformUpgrade("web", "1.1", "web-catalog", "upgrader")
	b.waitPlatformCondition("web", v1alpha1.ReasonQueued, time.Minute)
	time.Sleep(15 * time.Second)
	pb := b.waitPlatformCondition("web", v1alpha1.ReasonQueued, time.Second)
	if len(pb.Status.Hops) != 0 {
		t.Errorf("B's upgrade drove hops that are not its own:\n%s", toYAML(pb.Status.Hops))
	}
	if c := meta.FindStatusCondition(pb.Status.Conditions, v1alpha1.ConditionReady); !strings.Contains(c.Message, runA) {
		t.Errorf("B's Queued does not name the run it waits for (%s): %q", runA, c.Message)
	}
	if out, err := b.kubectl("delete", "platformupgrade", "web", "-n", b.ns); err != nil {
		t.Fatalf("delete B's upgrade: %v\n%s", err, out)
	}

	t.Log("A aborts its hop; an edit of the upgrade does not undo the abort, a retry does")
	if out, err := a.kubectl("patch", "platformupgrade", "web", "-n", a.ns, "--type=merge", "-p", `{"spec":{"suspend":false}}`); err != nil {
		t.Fatalf("resume A: %v\n%s", err, out)
	}
	waitFor(t, "A's hop waiting again", func() bool {
		r := a.run(runA)
		return r != nil && r.Status.Phase == v1alpha1.RunRunning && r.Status.Step == "go-ahead"
	})
	if out, err := a.upshift("abort", runA); err != nil && !strings.Contains(out, "Aborted") {
		t.Fatalf("upshift abort %s: %v\n%s", runA, err, out)
	}
	a.waitPlatform("web", v1alpha1.PlatformFailed, time.Minute)
	if out, err := a.kubectl("patch", "platformupgrade", "web", "-n", a.ns, "--type=merge", "-p", `{"spec":{"values":null,"autoRollback":true}}`); err != nil {
		t.Fatalf("edit A: %v\n%s", err, out)
	}
	pu := a.waitPlatform("web", v1alpha1.PlatformFailed, time.Minute)
	if c := meta.FindStatusCondition(pu.Status.Conditions, v1alpha1.ConditionReady); c == nil || !strings.Contains(c.Message, "aborted by an operator") {
		t.Errorf("after an edit, A's upgrade does not say its hop was aborted: %+v", c)
	}
	if r := a.run(runA); r == nil || r.Status.Phase != v1alpha1.RunAborted {
		t.Fatalf("an edit undid the abort of %s: %+v", runA, r)
	}
	if out, err := a.kubectl("annotate", "-n", a.ns, "--overwrite", "platformupgrade/web", v1alpha1.AnnotationRetry+"=1"); err != nil {
		t.Fatalf("annotate: %v\n%s", err, out)
	}
	waitFor(t, "the retry resuming A's aborted hop", func() bool { r := a.run(runA); return r != nil && r.Status.Phase == v1alpha1.RunRunning })
}
