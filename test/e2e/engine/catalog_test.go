package engine_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/runner"
)

// hopsCatalog is a release catalog of a small platform: a controller
// Deployment whose image tag is the version, and a ConfigMap that says the
// version, both read back by spec.detect. 1.2.0 is a required stop with a
// migration stage more than the others; 1.0.1 and 1.1.0 are patches and
// minors a path from 1.0.0 goes past.
const hopsCatalog = `apiVersion: upshift.dev/v1alpha1
kind: ReleaseCatalog
metadata: {name: hops}
spec:
  detect:
  - configMap: {namespace: hops-system, name: hops-version, key: version}
  - image: {kind: Deployment, namespace: hops-system, name: hops-controller}
  planTemplate: plan.yaml.tmpl
  releases:
  - {version: v1.0.0}
  - {version: v1.0.1}
  - {version: v1.1.0}
  - {version: v1.1.1}
  - {version: v1.2.0, requiredStop: true}
  - {version: v1.3.0, kubernetes: ">= 1.30"}
`

// hopsTemplate is every release's plan; BROKEN is replaced by what makes
// a release's image crash-loop (the local kubelet crash-loops a tag with
// "broken" in it).
const hopsTemplate = `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata:
  name: hops-{{ .Version }}
spec:
  version: "{{ .Version }}"
  stages:
  - name: controller
    steps:
    - name: controller
      manifests:
        inline: |
          apiVersion: v1
          kind: Namespace
          metadata: {name: hops-system}
          ---
          apiVersion: apps/v1
          kind: Deployment
          metadata: {name: hops-controller, namespace: hops-system}
          spec:
            replicas: 1
            selector: {matchLabels: {app: hops-controller}}
            template:
              metadata: {labels: {app: hops-controller}}
              spec:
                containers:
                - name: controller
                  image: example.com/hops/controller:{{ .Tag }}BROKEN
    gates:
    - ready: {apiVersion: apps/v1, kind: Deployment, namespace: hops-system, name: hops-controller}
{{- if ge .Minor 2 }}
  - name: migrate
    steps:
    - name: schema
      manifests:
        inline: |
          apiVersion: v1
          kind: ConfigMap
          metadata: {name: hops-schema, namespace: hops-system}
          data: {from: "{{ .From }}", to: "{{ .Version }}"}
  - name: cleanup
    steps:
    - name: cleanup
      manifests:
        inline: |
          apiVersion: v1
          kind: ConfigMap
          metadata: {name: hops-migrated, namespace: hops-system}
          data: {to: "{{ .Version }}"}
{{- end }}
  - name: version
    steps:
    - name: version
      manifests:
        inline: |
          apiVersion: v1
          kind: ConfigMap
          metadata: {name: hops-version, namespace: hops-system}
          data: {version: "{{ .Version }}"}
`

// writeHopsCatalog writes the catalog into a directory of its own; broken
// names the release whose image crash-loops ("" for none).
func (w *world) writeHopsCatalog(broken string) string {
	dir := w.t.TempDir()
	crash := ""
	if broken != "" {
		crash = `{{ if eq .Version "` + broken + `" }}-broken{{ end }}`
	}
	write(w.t, filepath.Join(dir, "catalog.yaml"), hopsCatalog)
	write(w.t, filepath.Join(dir, "plan.yaml.tmpl"), strings.ReplaceAll(hopsTemplate, "BROKEN", crash))
	return dir
}

// hopsVersion is what the platform says it runs: the ConfigMap's version
// and the controller's image.
func (w *world) hopsVersion() (string, string) {
	w.t.Helper()
	cm, err := w.cs.CoreV1().ConfigMaps("hops-system").Get(w.ctx, "hops-version", metaGet)
	if err != nil {
		w.t.Fatal(err)
	}
	d, err := w.cs.AppsV1().Deployments("hops-system").Get(w.ctx, "hops-controller", metaGet)
	if err != nil {
		w.t.Fatal(err)
	}
	return cm.Data["version"], d.Spec.Template.Spec.Containers[0].Image
}

// TestUpgradeToStopsAtTheFailedHop: `plan --to` prints the path through a
// required stop, past a patch and a minor's earlier release, and changes
// nothing; `upgrade --to` runs hop 1, hop 2 fails and rolls back alone,
// hop 3 never starts, and the platform is left at hop 1's version.
func TestUpgradeToStopsAtTheFailedHop(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	good := w.writeHopsCatalog("")

	r := w.upshift(nil, "upgrade", "--to", "1.0.0", "--catalog", good)
	if r.code != 1 || !strings.Contains(r.stderr, "no version source found the platform") || !strings.Contains(r.stderr, "add --install") {
		t.Fatalf("upgrade on an empty cluster: want exit 1 saying to add --install, got %s", r)
	}
	w.mustExit(0, nil, "upgrade", "--to", "1.0.0", "--catalog", good, "--install")
	if v, img := w.hopsVersion(); v != "1.0.0" || img != "example.com/hops/controller:v1.0.0" {
		t.Fatalf("after the install the platform says %s, %s", v, img)
	}
	r = w.mustExit(1, nil, "upgrade", "--to", "1.0.0", "--catalog", good, "--install")
	mustContain(t, "a second install", r.stderr, "the cluster runs 1.0.0 already", "leave --install out")

	p := w.mustExit(0, nil, "plan", "--to", "v1.3.0", "--catalog", good)
	mustContain(t, "plan --to", p.stdout,
		"from 1.0.0 to 1.3.0 in 3 hops: 1.1.1 → 1.2.0 → 1.3.0",
		"the cluster runs 1.0.0 (configMap hops-system/hops-version key version: 1.0.0; image of Deployment hops-system/hops-controller: v1.0.0)",
		"not stopped at: 1.0.1, 1.1.0",
		"hop 1/3: 1.0.0 → 1.1.1", "plan hops-1.1.1: target version 1.1.1",
		"hop 2/3: 1.1.1 → 1.2.0", "plan hops-1.2.0: target version 1.2.0", "stage migrate",
		"hop 3/3: 1.2.0 → 1.3.0",
		"update deployment hops-system/hops-controller",
		"nothing was changed")
	if v, _ := w.hopsVersion(); v != "1.0.0" {
		t.Fatalf("plan --to changed the platform: it says %s", v)
	}

	bad := w.writeHopsCatalog("1.2.0")
	reportFile := filepath.Join(t.TempDir(), "upgrade.md")
	r = w.mustExit(2, nil, append([]string{"upgrade", "--to", "1.3.0", "--catalog", bad, "--report", reportFile}, fastLease...)...)
	mustContain(t, "upgrade with a broken 1.2.0", r.stdout,
		"1.0.0 → 1.1.1  hops-1.1.1  Succeeded",
		"1.1.1 → 1.2.0  hops-1.2.0  RolledBack",
		"1.2.0 → 1.3.0              not run")
	mustContain(t, "upgrade with a broken 1.2.0", r.stderr, "run hops-1.2.0 failed and was rolled back, restore verified", "CrashLoopBackOff")
	mustContain(t, "upgrade with a broken 1.2.0", r.stdout, "report: upshift report hops-1.1.1 hops-1.2.0")
	md, err := os.ReadFile(reportFile)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "the upgrade's report", string(md),
		"# Upgrade report: 1.0.0 → 1.3.0", "**To:** 1.3.0\n", "**Reached:** 1.1.1", "**Hops:** 3 (2 run, 1 not run)",
		"at hop 2 of 3 (run hops-1.2.0, 1.1.1 → 1.2.0): rolled back, restore verified",
		"| 1 | hops-1.1.1 | 1.0.0 | 1.1.1 | Succeeded |",
		"| 2 | hops-1.2.0 | 1.1.1 | 1.2.0 | RolledBack |",
		"| 3 |  | 1.2.0 | 1.3.0 | not run |",
		"## Hop 3: not run (1.2.0 → 1.3.0)")
	if v, img := w.hopsVersion(); v != "1.1.1" || img != "example.com/hops/controller:v1.1.1" {
		t.Errorf("after hop 2 rolled back the platform says %s, %s; want hop 1's 1.1.1", v, img)
	}
	if w.run("hops-1.1.1").Status.Phase != v1alpha1.RunSucceeded {
		t.Error("hop 1's run is not Succeeded after hop 2 failed")
	}
	if r := w.upshift(nil, "status", "hops-1.3.0"); r.code == 0 {
		t.Errorf("hop 3 ran after hop 2 failed: %s", r)
	}
}

// TestUpgradeToRunsThreeHops: one `upgrade --to` from 1.0.0 through the
// required stop to 1.3.0, past a patch and a minor's earlier release:
// three hops, each its own run Succeeded, the platform at 1.3.0, and the
// --report saying the target was reached in 3 hops.
func TestUpgradeToRunsThreeHops(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	cat := w.writeHopsCatalog("")
	w.mustExit(0, nil, "upgrade", "--to", "1.0.0", "--catalog", cat, "--install")

	reportFile := filepath.Join(t.TempDir(), "upgrade.md")
	r := w.mustExit(0, nil, append([]string{"upgrade", "--to", "1.3.0", "--catalog", cat, "--report", reportFile}, fastLease...)...)
	mustContain(t, "the upgrade", r.stdout,
		"1.0.0 → 1.1.1  hops-1.1.1  Succeeded",
		"1.1.1 → 1.2.0  hops-1.2.0  Succeeded",
		"1.2.0 → 1.3.0  hops-1.3.0  Succeeded",
		"report: upshift report hops-1.1.1 hops-1.2.0 hops-1.3.0")
	if strings.Contains(r.stdout, "  not run") {
		t.Errorf("a hop is listed as not run after the target was reached:\n%s", r.stdout)
	}
	for _, name := range []string{"hops-1.1.1", "hops-1.2.0", "hops-1.3.0"} {
		if run := w.run(name); run.Status.Phase != v1alpha1.RunSucceeded {
			t.Errorf("run %s is %s, want Succeeded", name, run.Status.Phase)
		}
	}
	if v, img := w.hopsVersion(); v != "1.3.0" || img != "example.com/hops/controller:v1.3.0" {
		t.Errorf("after the upgrade the platform says %s, %s; want 1.3.0", v, img)
	}
	md, err := os.ReadFile(reportFile)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "the upgrade's report", string(md),
		"# Upgrade report: 1.0.0 → 1.3.0", "**Reached:** 1.3.0",
		"Succeeded: reached version 1.3.0 in 3 hop(s)", "**Hops:** 3\n",
		"| 1 | hops-1.1.1 | 1.0.0 | 1.1.1 | Succeeded |",
		"| 2 | hops-1.2.0 | 1.1.1 | 1.2.0 | Succeeded |",
		"| 3 | hops-1.3.0 | 1.2.0 | 1.3.0 | Succeeded |")
	if strings.Contains(string(md), "| not run |") {
		t.Errorf("the report lists a hop as not run:\n%s", md)
	}
}

// TestUpgradeToResumesAKilledHop: `upgrade --to` killed (SIGKILL) in the
// middle of hop 2, its version sources half-way; the same command again
// resumes hop 2 from the plan saved with its run, then runs hop 3.
func TestUpgradeToResumesAKilledHop(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	cat := w.writeHopsCatalog("")
	w.mustExit(0, nil, "upgrade", "--to", "1.0.0", "--catalog", cat, "--install")

	// Hop 1 (one stage and the version stage) saves fewer transitions
	// than this; hop 2 (four stages) more: the kill lands in hop 2.
	const killAt = 14
	killed := w.upshift([]string{runner.KillAfterTransitionEnv + "=" + strconv.Itoa(killAt)},
		append([]string{"upgrade", "--to", "1.2.0", "--catalog", cat}, fastLease...)...)
	if killed.code != -9 {
		t.Fatalf("want the upgrade killed in hop 2, got %s", killed)
	}
	hop1, hop2 := w.run("hops-1.1.1"), w.run("hops-1.2.0")
	if hop1.Status.Phase != v1alpha1.RunSucceeded || hop2.Status.Phase.Finished() {
		t.Fatalf("after the kill: hop 1 %s (%d transitions), hop 2 %s; want hop 1 done and hop 2 unfinished", hop1.Status.Phase, hop1.Status.Transitions, hop2.Status.Phase)
	}
	if v, img := w.hopsVersion(); v != "1.1.1" || img != "example.com/hops/controller:v1.2.0" {
		t.Fatalf("the kill was meant to leave the sources half-way (1.1.1 and v1.2.0), got %s and %s", v, img)
	}

	r := w.mustExit(0, nil, append([]string{"upgrade", "--to", "1.3.0", "--catalog", cat}, fastLease...)...)
	mustContain(t, "the upgrade again", r.stdout+r.stderr,
		"run hops-1.2.0 to 1.2.0 is unfinished", "resuming",
		"… → 1.2.0 (resumed)  hops-1.2.0  Succeeded",
		"1.2.0 → 1.3.0        hops-1.3.0  Succeeded")
	if v, img := w.hopsVersion(); v != "1.3.0" || img != "example.com/hops/controller:v1.3.0" {
		t.Errorf("after the upgrade the platform says %s, %s; want 1.3.0", v, img)
	}
	if hop2 := w.run("hops-1.2.0"); hop2.Status.Attempt != 1 {
		t.Errorf("hop 2 was started over (attempt %d), not resumed", hop2.Status.Attempt)
	}
}

// TestUpgradeToChecksPeersFirst: the platform is peered with a second
// cluster, whose kubeconfig is a Secret of the first. A peer on a version
// a release does not work with, a peer the compatibility matrix leaves
// behind, and a peer that cannot be read each block the upgrade before
// any write, naming the peer.
func TestUpgradeToChecksPeersFirst(t *testing.T) {
	t.Parallel()
	w := newWorld(t, localcluster.Options{})
	peer, err := testenv.StartTied(localcluster.Options{Name: "peer", Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = peer.Stop() })
	peerCS, err := kubernetes.NewForConfig(peer.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	setPeerVersion := func(v string) {
		t.Helper()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hops-version", Namespace: "hops-system"}, Data: map[string]string{"version": v}}
		if _, err := peerCS.CoreV1().ConfigMaps("hops-system").Update(w.ctx, cm, metav1.UpdateOptions{}); apierrors.IsNotFound(err) {
			_, err = peerCS.CoreV1().ConfigMaps("hops-system").Create(w.ctx, cm, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := peerCS.CoreV1().Namespaces().Create(w.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "hops-system"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	setPeerVersion("0.9.0")

	cat := w.writeHopsCatalog("")
	w.mustExit(0, nil, "upgrade", "--to", "1.0.0", "--catalog", cat, "--install")
	peerKubeconfig, err := os.ReadFile(peer.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	putPeerSecret := func(name string, kubeconfig []byte) {
		t.Helper()
		_, err := w.cs.CoreV1().Secrets("hops-system").Create(w.ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"hops.example.com/peer": "true"},
				Annotations: map[string]string{"upshift.dev/peer-name": strings.TrimPrefix(name, "peer-")}},
			Data: map[string][]byte{"kubeconfig": kubeconfig},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	putPeerSecret("peer-east", peerKubeconfig)
	withPeers := strings.Replace(hopsCatalog, "  planTemplate:", `  peers:
    kubeconfigSecrets: {namespace: hops-system, selector: hops.example.com/peer=true}
    detect:
    - configMap: {namespace: hops-system, name: hops-version, key: version}
  compatibility:
    configMap: {namespace: hops-system, name: hops-compatibility, key: compatibility.yaml}
  planTemplate:`, 1)
	withPeers = strings.Replace(withPeers, "{version: v1.1.1}", `{version: v1.1.1, peers: ">= 1.0.0"}`, 1)
	write(t, filepath.Join(cat, "catalog.yaml"), withPeers)
	if _, err := w.cs.CoreV1().ConfigMaps("hops-system").Create(w.ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "hops-compatibility", Namespace: "hops-system"},
		Data:       map[string]string{"compatibility.yaml": "v1.0.0: [v1.1.1]\nv1.1.1: [v1.2.0]\n"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	writes := len(w.upshiftWrites())
	r := w.mustExit(1, nil, "upgrade", "--to", "1.1.1", "--catalog", cat)
	mustContain(t, "a peer on 0.9.0", r.stderr, "peer-skew", "1.1.1 works with peers >=1.0.0; peer east runs 0.9.0")

	setPeerVersion("1.0.0")
	p := w.mustExit(0, nil, "plan", "--to", "1.1.1", "--catalog", cat)
	mustContain(t, "plan with the peer on 1.0.0", p.stdout, "peers: east 1.0.0", "hop 1/1: 1.0.0 → 1.1.1")
	r = w.mustExit(1, nil, "upgrade", "--to", "1.2.0", "--catalog", cat)
	mustContain(t, "the matrix leaving the peer behind", r.stderr,
		"compatibility matrix configMap hops-system/hops-compatibility key compatibility.yaml",
		"1.2.0 is not listed as reachable from 1.0.0 (the lowest version, peer east's)")

	putPeerSecret("peer-gone", []byte(strings.ReplaceAll(string(peerKubeconfig), peer.RESTConfig().Host, "https://127.0.0.1:1")))
	r = w.mustExit(1, nil, "upgrade", "--to", "1.1.1", "--catalog", cat)
	mustContain(t, "a peer that cannot be read", r.stderr, "cannot read the version of 1 peer", "peer gone (kubeconfig in Secret hops-system/peer-gone)")
	if n := len(w.upshiftWrites()); n != writes {
		t.Errorf("the refused upgrades wrote to the cluster: %d writes before, %d after", writes, n)
	}
	if v, _ := w.hopsVersion(); v != "1.0.0" {
		t.Errorf("the platform moved to %s", v)
	}
}
