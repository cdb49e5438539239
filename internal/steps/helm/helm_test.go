package helm_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients/clienttest"
	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/helm"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// chart writes the test chart at version v: a Deployment whose image tag
// is the value tag, and a ConfigMap; 2.x adds a second ConfigMap.
func chart(t *testing.T, v string) *helmx.Chart {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "addon")
	files := map[string]string{
		"Chart.yaml":  fmt.Sprintf("apiVersion: v2\nname: addon\nversion: %s\n", v),
		"values.yaml": "tag: \"1.0\"\n",
		"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: {{ .Release.Name }}}
spec:
  replicas: 1
  selector: {matchLabels: {app: addon}}
  template:
    metadata: {labels: {app: addon}}
    spec:
      containers: [{name: addon, image: "example.com/addon:{{ .Values.tag }}"}]
`,
		"templates/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Release.Name }}-config}\ndata: {tag: {{ .Values.tag | quote }}}\n",
	}
	if v[0] == '2' {
		files["templates/extra.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Release.Name }}-extra}\n"
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := helmx.FetchChart(context.Background(), helmx.ChartRef{Chart: dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := helmx.LoadArchive(b)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

type fixture struct {
	*clienttest.Env
	clients helm.Clients
}

func newFixture(t *testing.T) *fixture {
	e := clienttest.New(t)
	return &fixture{Env: e, clients: helm.Clients{Helm: e.Helm, Waiter: e.Waiter, Mapper: e.Mapper}}
}

func (f *fixture) run(t *testing.T, version, tag string, timeout time.Duration) step.Result {
	t.Helper()
	ex, err := helm.New(v1alpha1.HelmStep{Release: "addon", Namespace: f.NS}, chart(t, version), map[string]any{"tag": tag}, timeout, f.clients)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ex.Run(context.Background())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func (f *fixture) image(t *testing.T) string {
	t.Helper()
	d, err := f.Clientset.AppsV1().Deployments(f.NS).Get(context.Background(), "addon", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d.Spec.Template.Spec.Containers[0].Image
}

func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s = %q, want it to contain %q", what, got, w)
		}
	}
}

// TestInstallUpgradeAndRunAgain: install, upgrade (a new revision, a new
// object), then the same step again makes no revision.
func TestInstallUpgradeAndRunAgain(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()

	res := f.run(t, "1.0.0", "1.0", time.Minute)
	if res.Status != step.Succeeded {
		t.Fatalf("install: %+v", res)
	}
	mustContain(t, "install message", res.Message, "installed release "+f.NS+"/addon at revision 1", "chart addon 1.0.0")

	ex, err := helm.New(v1alpha1.HelmStep{Release: "addon", Namespace: f.NS}, chart(t, "2.0.0"), map[string]any{"tag": "2.0"}, time.Minute, f.clients)
	if err != nil {
		t.Fatal(err)
	}
	targets, err := ex.Targets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range targets {
		names = append(names, r.String())
	}
	mustContain(t, "targets", strings.Join(names, ", "),
		"configmap "+f.NS+"/addon-config", "configmap "+f.NS+"/addon-extra", "deployment "+f.NS+"/addon")

	res, err = ex.Run(ctx)
	if err != nil || res.Status != step.Succeeded {
		t.Fatalf("upgrade: %+v, %v", res, err)
	}
	mustContain(t, "upgrade message", res.Message, "from revision 1 to 2", "chart addon 2.0.0")
	if got := f.image(t); got != "example.com/addon:2.0" {
		t.Errorf("image after upgrade = %s", got)
	}

	res, err = ex.Run(ctx)
	if err != nil || res.Status != step.Succeeded {
		t.Fatalf("again: %+v, %v", res, err)
	}
	mustContain(t, "second run", res.Message, "already at revision 2")
	hist, err := f.Helm.History(ctx, "addon", f.NS)
	if err != nil || len(hist) != 2 {
		t.Errorf("history = %+v, %v; want 2 revisions", hist, err)
	}
}

// TestBrokenUpgradeGoesBack: the new image crash-loops; the step fails
// naming it, well before its timeout, and the release is back on
// revision 1's content, the added ConfigMap gone.
func TestBrokenUpgradeGoesBack(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if res := f.run(t, "1.0.0", "1.0", time.Minute); res.Status != step.Succeeded {
		t.Fatalf("install: %+v", res)
	}
	res := f.run(t, "2.0.0", "2.0-broken", 2*time.Minute)
	if res.Status != step.Failed {
		t.Fatalf("broken upgrade: %+v, want Failed", res)
	}
	mustContain(t, "message", res.Message, "CrashLoopBackOff", "rolled back to revision 1")
	st, err := f.Helm.Status(ctx, "addon", f.NS)
	if err != nil || st.Status != helmx.StatusDeployed || st.ChartVersion != "1.0.0" || st.Revision != 3 {
		t.Errorf("release = %+v, %v; want chart 1.0.0 deployed as revision 3", st, err)
	}
	if got := f.image(t); got != "example.com/addon:1.0" {
		t.Errorf("image after the failure = %s", got)
	}
	if _, err := f.Clientset.CoreV1().ConfigMaps(f.NS).Get(ctx, "addon-extra", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("addon-extra is still there: %v", err)
	}

	// The plan's rollback to the recorded revision finds nothing to do.
	msg, err := helm.RollbackTo(ctx, f.clients, "addon", f.NS, 1, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "RollbackTo", msg, "back on revision 1's content (revision 3)")
}

// TestBrokenInstallIsRemoved: a release the step installed and that never
// became ready is uninstalled; StartingRevision says 0 again.
func TestBrokenInstallIsRemoved(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	res := f.run(t, "1.0.0", "1.0-broken", 2*time.Minute)
	if res.Status != step.Failed {
		t.Fatalf("broken install: %+v, want Failed", res)
	}
	mustContain(t, "message", res.Message, "CrashLoopBackOff", "uninstalled release "+f.NS+"/addon")
	if rev, err := helm.StartingRevision(ctx, f.Helm, "addon", f.NS); err != nil || rev != 0 {
		t.Errorf("StartingRevision = %d, %v; want 0", rev, err)
	}
	if _, err := f.Clientset.AppsV1().Deployments(f.NS).Get(ctx, "addon", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the deployment is still there: %v", err)
	}
}

// TestPendingReleaseIsResolved: a run killed mid-upgrade leaves the
// release pending; the step rolls it back and then upgrades.
func TestPendingReleaseIsResolved(t *testing.T) {
	f := newFixture(t)
	if res := f.run(t, "1.0.0", "1.0", time.Minute); res.Status != step.Succeeded {
		t.Fatalf("install: %+v", res)
	}
	cfg, err := f.Helm.ActionConfig(f.NS)
	if err != nil {
		t.Fatal(err)
	}
	last, err := cfg.Releases.Last("addon")
	if err != nil {
		t.Fatal(err)
	}
	pending := *last
	info := *last.Info
	info.Status = helmx.StatusPendingUpgrade
	pending.Info, pending.Version = &info, 2
	if err := cfg.Releases.Create(&pending); err != nil {
		t.Fatal(err)
	}

	res := f.run(t, "2.0.0", "2.0", time.Minute)
	if res.Status != step.Succeeded {
		t.Fatalf("upgrade of a pending release: %+v", res)
	}
	mustContain(t, "message", res.Message, "rolled back to revision 1", "from revision 3 to 4")
}
