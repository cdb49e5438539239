package image_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/retry"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients/clienttest"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/image"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	webV1     = "registry.example/web:v1"
	webV2     = "registry.example/web:v2"
	webBroken = "registry.example/web:v3-broken" // kwok: CrashLoopBackOff
	sidecarV1 = "registry.example/proxy:v1"
	sidecarV2 = "registry.example/proxy:v2"
	setupV1   = "registry.example/setup:v1"
)

func ptr[T any](v T) *T { return &v }

// podTemplate has an init container, the app container "web" with env of
// its own, and a "sidecar".
func podTemplate(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}, Annotations: map[string]string{"team": "payments"}},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "setup", Image: setupV1}},
			Containers: []corev1.Container{
				{Name: "web", Image: webV1, Env: []corev1.EnvVar{{Name: "MODE", Value: "fast"}}, Args: []string{"--port=8080"}},
				{Name: "sidecar", Image: sidecarV1},
			},
		},
	}
}

func createDeployment(t *testing.T, e *clienttest.Env, name string, mutate func(*appsv1.Deployment)) {
	t.Helper()
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.NS, Labels: map[string]string{"tier": "front"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: podTemplate(name),
		},
	}
	if mutate != nil {
		mutate(d)
	}
	if _, err := e.Clientset.AppsV1().Deployments(e.NS).Create(context.Background(), d, metav1.CreateOptions{FieldManager: "kubectl-create"}); err != nil {
		t.Fatal(err)
	}
}

// addEnvByAnotherManager adds env vars to "web", one with valueFrom, as
// `kubectl edit` would (an Update by another field manager).
func addEnvByAnotherManager(t *testing.T, e *clienttest.Env, name string) {
	t.Helper()
	ctx := context.Background()
	// The deployment controller writes the object too: read, change and
	// update again on a conflict, as kubectl edit would.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := e.Clientset.AppsV1().Deployments(e.NS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		c := &d.Spec.Template.Spec.Containers[0]
		c.Env = append(c.Env,
			corev1.EnvVar{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			corev1.EnvVar{Name: "DB_URL", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "url", Optional: ptr(true)}}},
		)
		_, err = e.Clientset.AppsV1().Deployments(e.NS).Update(ctx, d, metav1.UpdateOptions{FieldManager: "kubectl-edit"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func newStep(t *testing.T, e *clienttest.Env, kind, name string, images map[string]string, timeout time.Duration) *image.Executor {
	t.Helper()
	ex, err := image.New(v1alpha1.ImageStep{Kind: kind, Namespace: e.NS, Name: name, Images: images}, timeout, e.Applier, e.Waiter, e.Clientset)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// runningImages lists, per running pod (not terminating) matching app,
// what its containers report: "web=…,sidecar=…".
func runningImages(t *testing.T, e *clienttest.Env, app string) []string {
	t.Helper()
	pods, err := e.Clientset.CoreV1().Pods(e.NS).List(context.Background(), metav1.ListOptions{LabelSelector: labels.Set{"app": app}.String()})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		var imgs []string
		for _, cs := range p.Status.ContainerStatuses {
			imgs = append(imgs, cs.Name+"="+cs.Image)
		}
		sort.Strings(imgs)
		out = append(out, strings.Join(imgs, ","))
	}
	return out
}

func TestImageKeepsEverythingElse(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	ctx := context.Background()
	createDeployment(t, e, "web", nil)
	addEnvByAnotherManager(t, e, "web")
	before, err := e.Clientset.AppsV1().Deployments(e.NS).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	ex := newStep(t, e, "Deployment", "web", map[string]string{"web": webV2}, 2*time.Minute)
	targets, _ := ex.Targets(ctx)
	if fmt.Sprint(targets) != fmt.Sprintf("[deployment %s/web]", e.NS) {
		t.Errorf("Targets = %v", targets)
	}
	for run := 1; run <= 2; run++ { // the second run is a resume after success
		res, err := ex.Run(ctx)
		if err != nil || res.Status != step.Succeeded {
			t.Fatalf("run %d: Run = %+v, %v", run, res, err)
		}
		if want := fmt.Sprintf("deployment %s/web runs web=%s (2 running pods checked)", e.NS, webV2); res.Message != want {
			t.Errorf("run %d: message %q, want %q", run, res.Message, want)
		}
	}

	after, err := e.Clientset.AppsV1().Deployments(e.NS).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := before.Spec.DeepCopy()
	want.Template.Spec.Containers[0].Image = webV2
	if diff := cmp.Diff(*want, after.Spec); diff != "" {
		t.Errorf("spec changed beyond the image (-want +got):\n%s", diff)
	}
	if after.Labels["tier"] != "front" || after.Spec.Template.Annotations["team"] != "payments" {
		t.Errorf("labels or annotations lost: %v %v", after.Labels, after.Spec.Template.Annotations)
	}
	env := after.Spec.Template.Spec.Containers[0].Env
	if len(env) != 3 || env[1].Name != "POD_NAME" || env[1].ValueFrom == nil || env[1].ValueFrom.FieldRef == nil ||
		env[2].Name != "DB_URL" || env[2].ValueFrom == nil || env[2].ValueFrom.ConfigMapKeyRef == nil {
		t.Errorf("env after the step = %+v, want MODE, and POD_NAME and DB_URL from valueFrom kept", env)
	}
	got := runningImages(t, e, "web")
	if len(got) != 2 {
		t.Fatalf("running pods = %v, want 2", got)
	}
	for _, p := range got {
		if p != "sidecar="+sidecarV1+",web="+webV2 {
			t.Errorf("a running pod reports %s", p)
		}
	}

	// A later step for the other container keeps the image set above.
	res, err := newStep(t, e, "Deployment", "web", map[string]string{"sidecar": sidecarV2}, 2*time.Minute).Run(ctx)
	if err != nil || res.Status != step.Succeeded {
		t.Fatalf("sidecar step: Run = %+v, %v", res, err)
	}
	final, err := e.Clientset.AppsV1().Deployments(e.NS).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := final.Spec.Template.Spec.Containers; c[0].Image != webV2 || c[1].Image != sidecarV2 || len(c[0].Env) != 3 {
		t.Errorf("after the sidecar step containers = %+v, want web %s (env kept) and sidecar %s", c, webV2, sidecarV2)
	}
}

func TestImageBrokenFailsEarlyNamingThePod(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	createDeployment(t, e, "web", nil)
	start := time.Now()
	res, err := newStep(t, e, "Deployment", "web", map[string]string{"web": webBroken}, 2*time.Minute).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Run: %s: %s", res.Status, res.Message)
	if res.Status != step.Failed {
		t.Fatalf("Run = %+v, want Failed", res)
	}
	for _, s := range []string{"pod " + e.NS + "/web-", "container web", "CrashLoopBackOff"} {
		if !strings.Contains(res.Message, s) {
			t.Errorf("message %q does not contain %q", res.Message, s)
		}
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Run took %s with a 2m timeout: it did not fail early", d)
	}
}

func TestImageUnknownContainer(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	createDeployment(t, e, "web", nil)
	res, err := newStep(t, e, "Deployment", "web", map[string]string{"web": webV2, "nope": "x:1"}, time.Minute).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Run: %s: %s", res.Status, res.Message)
	want := fmt.Sprintf(`deployment %s/web has no container "nope"; it has containers web, sidecar and init container setup`, e.NS)
	if res.Status != step.Failed || res.Message != want {
		t.Errorf("Run = %+v, want Failed %q", res, want)
	}
	// Nothing changed: web keeps its image.
	d, err := e.Clientset.AppsV1().Deployments(e.NS).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; img != webV1 {
		t.Errorf("web image = %s after a failed step, want %s", img, webV1)
	}
}

func TestImageInitContainer(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	createDeployment(t, e, "web", nil)
	res, err := newStep(t, e, "Deployment", "web", map[string]string{"setup": "registry.example/setup:v2"}, time.Minute).Run(context.Background())
	if err != nil || res.Status != step.Succeeded {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	d, err := e.Clientset.AppsV1().Deployments(e.NS).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := d.Spec.Template.Spec.InitContainers[0].Image; img != "registry.example/setup:v2" {
		t.Errorf("init container image = %s", img)
	}
}

// Pods that cannot be scheduled: the rollout never ends and never fails.
func TestImageTimeout(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	createDeployment(t, e, "web", func(d *appsv1.Deployment) {
		d.Spec.Template.Spec.NodeSelector = map[string]string{"upshift.test/none": "true"}
	})
	start := time.Now()
	res, err := newStep(t, e, "Deployment", "web", map[string]string{"web": webV2}, 3*time.Second).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Run: %s: %s", res.Status, res.Message)
	if res.Status != step.Failed || !strings.HasPrefix(res.Message, "timed out after 3s: deployment "+e.NS+"/web") {
		t.Errorf("Run = %+v, want Failed: timed out after 3s: deployment %s/web…", res, e.NS)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Run took %s with a 3s timeout", d)
	}
}

func TestImageMissingWorkload(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	res, err := newStep(t, e, "StatefulSet", "ghost", map[string]string{"db": "x:1"}, time.Minute).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := step.Failure("statefulset %s/ghost not found", e.NS); res != want {
		t.Errorf("Run = %+v, want %+v", res, want)
	}
}

// The DaemonSet runs a pod on each of the 3 kwok nodes; the StatefulSet
// rolls its 2 pods one by one.
func TestImageDaemonSetAndStatefulSet(t *testing.T) {
	t.Parallel()
	e := clienttest.New(t)
	ctx := context.Background()
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: e.NS},
		Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}, Template: podTemplate("agent")},
	}
	if _, err := e.Clientset.AppsV1().DaemonSets(e.NS).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: e.NS},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr(int32(2)), ServiceName: "db",
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, Template: podTemplate("db")},
	}
	if _, err := e.Clientset.AppsV1().StatefulSets(e.NS).Create(ctx, sts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		kind, name string
		pods       int
	}{{"DaemonSet", "agent", 3}, {"StatefulSet", "db", 2}} {
		res, err := newStep(t, e, tt.kind, tt.name, map[string]string{"web": webV2}, 2*time.Minute).Run(ctx)
		if err != nil || res.Status != step.Succeeded {
			t.Fatalf("%s: Run = %+v, %v", tt.kind, res, err)
		}
		if !strings.Contains(res.Message, fmt.Sprintf("(%d running pods checked)", tt.pods)) {
			t.Errorf("%s: message %q, want %d pods checked", tt.kind, res.Message, tt.pods)
		}
		got := runningImages(t, e, tt.name)
		if len(got) != tt.pods {
			t.Errorf("%s: running pods = %v, want %d", tt.kind, got, tt.pods)
		}
		for _, p := range got {
			if !strings.Contains(p, "web="+webV2) {
				t.Errorf("%s: a running pod reports %s", tt.kind, p)
			}
		}
	}
}
