package helmx_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/internal/helmx"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	chartDir  = "testdata/chart"
	imageV1   = "registry.example/app:v1"
	imageV2   = "registry.example/app:v2"
	imageBad  = "registry.example/app:v3-broken" // kwok: never Ready, CrashLoopBackOff
	replicas  = 2
	secretMsg = "sentinel-value-that-must-not-be-logged"
)

// env is one test's view of the cluster: a Helm client whose log is kept,
// a clientset to observe objects, and a fresh namespace.
type env struct {
	helm *helmx.Client
	cs   kubernetes.Interface
	ns   string
	log  *testenv.SyncBuffer
}

func setup(t *testing.T) *env {
	t.Helper()
	c := testenv.Cluster(t)
	logs := &testenv.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h, err := helmx.New(c.RESTConfig(), helmx.WithLogger(logger))
	if err != nil {
		t.Fatalf("helmx.New: %v", err)
	}
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return &env{helm: h, cs: cs, ns: newNamespace(t, cs), log: logs}
}

// newNamespace creates a namespace for one test and deletes it afterwards
// (without waiting: deletion takes seconds and nothing else uses it).
func newNamespace(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	name := "helmx-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.TrimRight(name, "-") + "-" + rand.String(5)
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() {
		if err := cs.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete namespace %s: %v", name, err)
		}
	})
	return name
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func loadChart(t *testing.T) *helmx.Chart {
	t.Helper()
	ch, err := helmx.Load(chartDir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return ch
}

func values(image string) map[string]any {
	return map[string]any{"image": image, "message": secretMsg}
}

// waitDeployment polls the Deployment until its template runs image and all
// replicas are updated and ready, and returns it.
func (e *env) waitDeployment(t *testing.T, name, image string) *appsv1.Deployment {
	t.Helper()
	var d *appsv1.Deployment
	var err error
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		d, err = e.cs.AppsV1().Deployments(e.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && d.Spec.Template.Spec.Containers[0].Image == image &&
			d.Status.ObservedGeneration >= d.Generation &&
			d.Status.ReadyReplicas == replicas && d.Status.UpdatedReplicas == replicas && d.Status.Replicas == replicas {
			return d
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("deployment %s/%s: %v", e.ns, name, err)
	}
	t.Fatalf("deployment %s/%s not ready with image %s: image %s, ready %d/%d, updated %d, observed generation %d of %d",
		e.ns, name, image, d.Spec.Template.Spec.Containers[0].Image, d.Status.ReadyReplicas, replicas,
		d.Status.UpdatedReplicas, d.Status.ObservedGeneration, d.Generation)
	return nil
}

// deploymentImage reads the Deployment's image now, without waiting.
func (e *env) deploymentImage(t *testing.T, name string) string {
	t.Helper()
	d, err := e.cs.AppsV1().Deployments(e.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get deployment %s/%s: %v", e.ns, name, err)
	}
	return d.Spec.Template.Spec.Containers[0].Image
}

// waitGone polls until the Deployment is not found.
func (e *env) waitGone(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := e.cs.AppsV1().Deployments(e.ns).Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("deployment %s/%s still there (err %v)", e.ns, name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (e *env) wantStatus(t *testing.T, name string, revision int, status helmx.Status) {
	t.Helper()
	st, err := e.helm.Status(context.Background(), name, e.ns)
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if st.Revision != revision || st.Status != status {
		t.Fatalf("Status = revision %d %s (%q), want revision %d %s", st.Revision, st.Status, st.Description, revision, status)
	}
}

// TestReleaseLifecycle walks one release through install, upgrade, a broken
// upgrade that is rolled back automatically, a manual rollback and uninstall,
// checking the cluster's objects after each step.
func TestReleaseLifecycle(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ch := loadChart(t)
	const rel = "web"
	good := helmx.UpgradeOptions{Wait: true, Timeout: time.Minute, RollbackOnFailure: true}

	// 1. Install.
	start := time.Now()
	res, err := e.helm.InstallOrUpgrade(ctxFor(t, 2*time.Minute), rel, e.ns, ch, values(imageV1), good)
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	t.Logf("TIMING install (wait): %s", time.Since(start).Round(time.Millisecond))
	if res.Revision != 1 || res.PreviousRevision != 0 || !res.Installed || res.Status != helmx.StatusDeployed || res.RolledBack {
		t.Fatalf("install result = %+v, want revision 1 from 0, installed, deployed", res)
	}
	e.waitDeployment(t, rel, imageV1)
	cm, err := e.cs.CoreV1().ConfigMaps(e.ns).Get(context.Background(), rel+"-config", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("configmap: %v", err)
	}
	if cm.Data["image"] != imageV1 || cm.Data["message"] != secretMsg {
		t.Fatalf("configmap data = %v", cm.Data)
	}
	e.wantStatus(t, rel, 1, helmx.StatusDeployed)

	// 2. Upgrade to a new image.
	start = time.Now()
	res, err = e.helm.InstallOrUpgrade(ctxFor(t, 2*time.Minute), rel, e.ns, ch, values(imageV2), good)
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	t.Logf("TIMING upgrade (wait): %s", time.Since(start).Round(time.Millisecond))
	if res.Revision != 2 || res.PreviousRevision != 1 || res.Installed || res.Status != helmx.StatusDeployed {
		t.Fatalf("upgrade result = %+v, want revision 2 from 1", res)
	}
	e.waitDeployment(t, rel, imageV2)

	// 3. Upgrade to an image that never becomes ready: Helm's wait times
	// out, the release is rolled back to revision 2's content as revision 4.
	start = time.Now()
	res, err = e.helm.InstallOrUpgrade(ctxFor(t, 2*time.Minute), rel, e.ns, ch, values(imageBad),
		helmx.UpgradeOptions{Wait: true, Timeout: 8 * time.Second, RollbackOnFailure: true})
	t.Logf("TIMING broken upgrade, 8s timeout, with rollback: %s", time.Since(start).Round(time.Millisecond))
	if err == nil {
		t.Fatalf("broken upgrade succeeded: %+v", res)
	}
	t.Logf("broken upgrade error (expected): %v", err)
	if res.FailedRevision != 3 || res.Revision != 4 || res.PreviousRevision != 2 || !res.RolledBack || res.Status != helmx.StatusDeployed {
		t.Fatalf("broken upgrade result = %+v, want failed 3, rolled back to 4 (from 2), deployed", res)
	}
	e.wantStatus(t, rel, 4, helmx.StatusDeployed)
	e.waitDeployment(t, rel, imageV2)

	hist, err := e.helm.History(context.Background(), rel, e.ns)
	if err != nil {
		t.Fatalf("History: %v", err)
	}
	var got []string
	for _, h := range hist {
		got = append(got, fmt.Sprintf("%d:%s", h.Revision, h.Status))
	}
	if want := "1:superseded 2:superseded 3:failed 4:deployed"; strings.Join(got, " ") != want {
		t.Fatalf("history = %s, want %s", strings.Join(got, " "), want)
	}
	if hist[0].Chart != "helmx-test" || hist[0].ChartVersion != "0.1.0" {
		t.Fatalf("history chart = %s %s", hist[0].Chart, hist[0].ChartVersion)
	}

	// 4. Roll back to revision 1: a new revision 5 with the first image.
	start = time.Now()
	info, err := e.helm.Rollback(ctxFor(t, 2*time.Minute), rel, e.ns, 1, helmx.WaitOptions{Wait: true, Timeout: time.Minute})
	if err != nil {
		t.Fatalf("rollback: %v", err)
	}
	t.Logf("TIMING rollback to 1 (wait): %s", time.Since(start).Round(time.Millisecond))
	if info.Revision != 5 || info.Status != helmx.StatusDeployed {
		t.Fatalf("rollback = revision %d %s, want 5 deployed", info.Revision, info.Status)
	}
	e.waitDeployment(t, rel, imageV1)

	// 5. Uninstall: the Deployment and the release are gone.
	start = time.Now()
	if err := e.helm.Uninstall(ctxFor(t, 2*time.Minute), rel, e.ns, helmx.WaitOptions{Wait: true, Timeout: time.Minute}); err != nil {
		t.Fatalf("uninstall: %v", err)
	}
	t.Logf("TIMING uninstall (wait): %s", time.Since(start).Round(time.Millisecond))
	e.waitGone(t, rel)
	if _, err := e.helm.Status(context.Background(), rel, e.ns); !errors.Is(err, helmx.ErrReleaseNotFound) {
		t.Fatalf("Status after uninstall: err = %v, want ErrReleaseNotFound", err)
	}
	if err := e.helm.Uninstall(context.Background(), rel, e.ns, helmx.WaitOptions{}); !errors.Is(err, helmx.ErrReleaseNotFound) {
		t.Fatalf("second Uninstall: err = %v, want ErrReleaseNotFound", err)
	}

	// Helm's debug log was captured but never carries release values.
	logs := e.log.String()
	if !strings.Contains(logs, "source=helm") {
		t.Fatalf("no Helm debug log captured:\n%s", logs)
	}
	if strings.Contains(logs, secretMsg) {
		t.Fatalf("log contains a release value:\n%s", logs)
	}
}

// TestFailedInstallIsRemoved: a fresh install that never becomes ready, with
// RollbackOnFailure, leaves neither a release nor its objects behind.
func TestFailedInstallIsRemoved(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ch := loadChart(t)
	start := time.Now()
	res, err := e.helm.InstallOrUpgrade(ctxFor(t, 2*time.Minute), "bad", e.ns, ch, values(imageBad),
		helmx.UpgradeOptions{Wait: true, Timeout: 5 * time.Second, RollbackOnFailure: true})
	t.Logf("TIMING broken install, 5s timeout, uninstalled: %s", time.Since(start).Round(time.Millisecond))
	if err == nil {
		t.Fatalf("broken install succeeded: %+v", res)
	}
	if !res.Installed || res.FailedRevision != 1 || res.Revision != 0 || !res.RolledBack {
		t.Fatalf("result = %+v, want installed, failed revision 1, rolled back to nothing", res)
	}
	if _, err := e.helm.Status(context.Background(), "bad", e.ns); !errors.Is(err, helmx.ErrReleaseNotFound) {
		t.Fatalf("Status: err = %v, want ErrReleaseNotFound", err)
	}
	e.waitGone(t, "bad")
}

// TestFailedUpgradeWithoutRollback: without RollbackOnFailure the failed
// revision stays current and the next good upgrade starts from the last
// deployed revision.
func TestFailedUpgradeWithoutRollback(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ch := loadChart(t)
	ctx := ctxFor(t, 2*time.Minute)
	if _, err := e.helm.InstallOrUpgrade(ctx, "app", e.ns, ch, values(imageV1), helmx.UpgradeOptions{Wait: true}); err != nil {
		t.Fatalf("install: %v", err)
	}
	res, err := e.helm.InstallOrUpgrade(ctx, "app", e.ns, ch, values(imageBad), helmx.UpgradeOptions{Wait: true, Timeout: 4 * time.Second})
	if err == nil {
		t.Fatal("broken upgrade succeeded")
	}
	if res.FailedRevision != 2 || res.Revision != 2 || res.Status != helmx.StatusFailed || res.RolledBack {
		t.Fatalf("result = %+v, want revision 2 failed, not rolled back", res)
	}
	if img := e.deploymentImage(t, "app"); img != imageBad {
		t.Fatalf("image = %s, want the broken one left in place", img)
	}
	res, err = e.helm.InstallOrUpgrade(ctx, "app", e.ns, ch, values(imageV2), helmx.UpgradeOptions{Wait: true})
	if err != nil {
		t.Fatalf("fixing upgrade: %v", err)
	}
	if res.Revision != 3 || res.PreviousRevision != 1 {
		t.Fatalf("result = %+v, want revision 3 from deployed revision 1", res)
	}
	e.waitDeployment(t, "app", imageV2)
}

// TestArchiveAndKubeconfig installs from a packaged .tgz with a client built
// from the kubeconfig file, and checks that a pending release is refused.
func TestArchiveAndKubeconfig(t *testing.T) {
	t.Parallel()
	e := setup(t)
	c := testenv.Cluster(t)
	h, err := helmx.NewFromKubeconfig(c.KubeconfigPath(), "")
	if err != nil {
		t.Fatalf("NewFromKubeconfig: %v", err)
	}
	tgz, err := chartutil.Save(loadChart(t), t.TempDir())
	if err != nil {
		t.Fatalf("package chart: %v", err)
	}
	if filepath.Base(tgz) != "helmx-test-0.1.0.tgz" {
		t.Fatalf("archive = %s", tgz)
	}
	ch, err := helmx.Load(tgz)
	if err != nil {
		t.Fatalf("Load(%s): %v", tgz, err)
	}
	ctx := ctxFor(t, 2*time.Minute)
	res, err := h.InstallOrUpgrade(ctx, "arc", e.ns, ch, values(imageV1), helmx.UpgradeOptions{Wait: true})
	if err != nil || res.Revision != 1 {
		t.Fatalf("install from archive: %+v, %v", res, err)
	}
	e.waitDeployment(t, "arc", imageV1)

	// Mark the release as if an upgrade had been interrupted.
	cfg, err := h.ActionConfig(e.ns)
	if err != nil {
		t.Fatal(err)
	}
	last, err := cfg.Releases.Last("arc")
	if err != nil {
		t.Fatal(err)
	}
	last.Info.Status = helmx.StatusPendingUpgrade
	if err := cfg.Releases.Update(last); err != nil {
		t.Fatal(err)
	}
	_, err = h.InstallOrUpgrade(ctx, "arc", e.ns, ch, values(imageV2), helmx.UpgradeOptions{})
	if !errors.Is(err, helmx.ErrOperationInProgress) {
		t.Fatalf("upgrade of a pending release: err = %v, want ErrOperationInProgress", err)
	}
	if img := e.deploymentImage(t, "arc"); img != imageV1 {
		t.Fatalf("image = %s after a refused upgrade, want %s", img, imageV1)
	}
}
