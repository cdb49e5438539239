package controller_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

var platformsGVR = v1alpha1.GroupVersion.WithResource("platformupgrades")

// webCatalog is a release catalog of the web platform in a ConfigMap:
// versions 1.0, 1.1 and 1.2, read from web-config's version and web's
// image tag; every release's plan is the template. A release named in
// broken gets an image that crash-loops.
func (e *env) webCatalog(name, broken string) {
	e.t.Helper()
	crash := ""
	if broken != "" {
		crash = `{{ if eq .Tag "` + broken + `" }}-broken{{ end }}`
	}
	tmpl := `apiVersion: upshift.dev/v1alpha1
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
  - name: app
    steps:
    - name: app
      image: {kind: Deployment, namespace: NS, name: web, images: {web: "example.com/web:{{ .Tag }}CRASH"}}
`
	tmpl = strings.ReplaceAll(strings.ReplaceAll(tmpl, "NS", e.ns), "CRASH", crash)
	cat := `apiVersion: upshift.dev/v1alpha1
kind: ReleaseCatalog
metadata: {name: web}
spec:
  detect:
  - configMap: {namespace: NS, name: web-config, key: version}
  - image: {kind: Deployment, namespace: NS, name: web}
  planTemplate: plan.tmpl
  releases:
  - {version: "1.0"}
  - {version: "1.1"}
  - {version: "1.2"}
`
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name},
		Data: map[string]string{"catalog.yaml": strings.ReplaceAll(cat, "NS", e.ns), "plan.tmpl": tmpl}}
	if _, err := e.cs.CoreV1().ConfigMaps(e.ns).Create(e.ctx, cm, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) createPlatformUpgrade(name, target, catalog, sa string) {
	e.t.Helper()
	out, err := e.kubectlStdin(`apiVersion: upshift.dev/v1alpha1
kind: PlatformUpgrade
metadata: {name: `+name+`, namespace: `+e.ns+`}
spec:
  targetVersion: "`+target+`"
  catalog: {configMap: {name: `+catalog+`}}
  serviceAccountName: `+sa+`
`, "apply", "-f", "-")
	if err != nil {
		e.t.Fatalf("kubectl apply PlatformUpgrade: %v\n%s", err, out)
	}
}

func (e *env) getPlatformUpgrade(name string) *v1alpha1.PlatformUpgrade {
	e.t.Helper()
	u, err := e.dyn.Resource(platformsGVR).Namespace(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("get PlatformUpgrade %s: %v", name, err)
	}
	pu := &v1alpha1.PlatformUpgrade{}
	if err := kruntime.DefaultUnstructuredConverter.FromUnstructured(u.Object, pu); err != nil {
		e.t.Fatal(err)
	}
	return pu
}

// waitPlatform waits until the upgrade's phase is phase at its generation.
func (e *env) waitPlatform(name string, phase v1alpha1.PlatformPhase, timeout time.Duration) *v1alpha1.PlatformUpgrade {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	var pu *v1alpha1.PlatformUpgrade
	for time.Now().Before(deadline) {
		pu = e.getPlatformUpgrade(name)
		if pu.Status.Phase == phase && pu.Status.ObservedGeneration == pu.Generation {
			return pu
		}
		time.Sleep(200 * time.Millisecond)
	}
	e.t.Fatalf("PlatformUpgrade %s is not %s after %s; status:\n%s", name, phase, timeout, toYAML(pu.Status))
	return nil
}

// TestPlatformUpgradeRunsEveryHop: a PlatformUpgrade with a catalog in a
// ConfigMap takes the platform from 1.0 to 1.2 through 1.1, as its
// ServiceAccount, each hop a run; its status tells the versions, the
// path and each hop's run, and kubectl shows them.
func TestPlatformUpgradeRunsEveryHop(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.installWeb()
	e.grant("upgrader")
	e.webCatalog("web-catalog", "")
	e.startController("ctl-platform", nil)

	e.createPlatformUpgrade("web", "1.2", "web-catalog", "upgrader")
	pu := e.waitPlatform("web", v1alpha1.PlatformSucceeded, 2*time.Minute)

	if got := e.webImage(); got != "example.com/web:1.2" {
		t.Errorf("web's image is %s, want example.com/web:1.2", got)
	}
	st := pu.Status
	if st.PreviousVersion != "1.0.0" || st.CurrentVersion != "1.2.0" || strings.Join(st.Path, " ") != "1.1.0 1.2.0" || st.Hop != "2/2" {
		t.Errorf("status: previous %s, current %s, path %v, hop %s; want 1.0.0, 1.2.0, [1.1.0 1.2.0], 2/2", st.PreviousVersion, st.CurrentVersion, st.Path, st.Hop)
	}
	// A hop's run is keyed by the upgrade's namespace.
	if len(st.Hops) != 2 || st.Hops[0].Run != e.ns+".web-1.1.0" || st.Hops[0].From != "1.0.0" || st.Hops[1].Run != e.ns+".web-1.2.0" || st.Hops[1].From != "1.1.0" ||
		st.Hops[0].Phase != v1alpha1.RunSucceeded || st.Hops[1].Phase != v1alpha1.RunSucceeded {
		t.Errorf("hops:\n%s", toYAML(st.Hops))
	}
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Ready: %+v", c)
	}
	out, err := e.kubectl("get", "platformupgrades", "-n", e.ns)
	if err != nil || !strings.Contains(out, "TARGET") || !strings.Contains(out, "CURRENT") || !strings.Contains(out, "1.2.0") || !strings.Contains(out, "Succeeded") || !strings.Contains(out, "2/2") {
		t.Errorf("kubectl get platformupgrades: %v\n%s", err, out)
	}
	events := e.events("web")
	for _, want := range []string{"Normal HopSucceeded: hop to 1.1.0 succeeded (run " + e.ns + ".web-1.1.0)", "Normal UpgradeSucceeded: the platform runs 1.2"} {
		if !contains(events, want) {
			t.Errorf("no event %q in:\n%s", want, strings.Join(events, "\n"))
		}
	}
	if writes := e.writesBy("system:serviceaccount:"+e.ns+":upgrader", e.ns); !contains(writes, "patch deployments "+e.ns+"/web") {
		t.Errorf("the hops were not run as the ServiceAccount: its writes are %v", writes)
	}
}

// TestPlatformUpgradeStopsAtARolledBackHop: hop 2 crash-loops and rolls
// back; hop 1 stays done, the upgrade is RolledBack and Stalled, and says
// which hop.
func TestPlatformUpgradeStopsAtARolledBackHop(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.installWeb()
	e.grant("upgrader")
	e.webCatalog("web-catalog", "1.2")
	e.startController("ctl-platform-fail", nil)

	e.createPlatformUpgrade("web", "1.2", "web-catalog", "upgrader")
	pu := e.waitPlatform("web", v1alpha1.PlatformRolledBack, 3*time.Minute)

	if got := e.webImage(); got != "example.com/web:1.1" {
		t.Errorf("web's image is %s, want hop 1's example.com/web:1.1", got)
	}
	if got := e.webConfig(); got != "1.1" {
		t.Errorf("web-config says %s, want hop 1's 1.1", got)
	}
	st := pu.Status
	if len(st.Hops) != 2 || st.Hops[0].Phase != v1alpha1.RunSucceeded || st.Hops[1].Phase != v1alpha1.RunRolledBack || st.CurrentVersion != "1.1.0" {
		t.Errorf("current %s, hops:\n%s", st.CurrentVersion, toYAML(st.Hops))
	}
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionStalled); c == nil || c.Reason != v1alpha1.ReasonRolledBack ||
		!strings.Contains(c.Message, "hop to 1.2.0 failed and was rolled back (run "+e.ns+".web-1.2.0)") || !strings.Contains(c.Message, "CrashLoopBackOff") {
		t.Errorf("Stalled: %+v", c)
	}

	// upshift.dev/retry starts the failed hop again, as a new attempt:
	// it rolls back again (the release is still broken), hop 1 untouched.
	if out, err := e.kubectl("annotate", "-n", e.ns, "--overwrite", "platformupgrade/web", v1alpha1.AnnotationRetry+"=1"); err != nil {
		t.Fatalf("annotate: %v\n%s", err, out)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		run := &v1alpha1.UpgradeRun{}
		u, err := e.dyn.Resource(v1alpha1.GroupVersion.WithResource("upgraderuns")).Namespace(e.runs).Get(e.ctx, e.ns+".web-1.2.0", metav1.GetOptions{})
		if err == nil {
			_ = kruntime.DefaultUnstructuredConverter.FromUnstructured(u.Object, run)
		}
		if run.Status.Attempt == 2 && run.Status.Phase == v1alpha1.RunRolledBack {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the retry did not run hop 2 again: %v\n%s", err, toYAML(run.Status))
		}
		time.Sleep(300 * time.Millisecond)
	}
	pu = e.waitPlatform("web", v1alpha1.PlatformRolledBack, time.Minute)
	if pu.Status.HandledActions[v1alpha1.AnnotationRetry] != "1" {
		t.Errorf("handledActions: %v", pu.Status.HandledActions)
	}
	if got := e.webConfig(); got != "1.1" {
		t.Errorf("web-config says %s after the retry, want hop 1's 1.1", got)
	}
}
