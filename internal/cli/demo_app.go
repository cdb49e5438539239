package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/config/crd"
	"github.com/upshift-dev/upshift/internal/apps"
	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/source"
)

// The app part of the demo: Deployment cart rolled out by an AppRollout
// (examples/demo/rollout), a canary at 20 % judged by Prometheus. v2's
// build is broken: its error ratio breaches the analysis and the canary
// is rolled back by itself. v3 is healthy: promoted to 100 %.
const (
	demoAppNamespace = "demo-cart"
	demoAppName      = "cart"
)

// demoApp is the demo's last part. Without a prometheus binary it says
// how to get one and skips, as the tests that need one do.
func demoApp(cmd *cobra.Command, kubeconfig, dir string) error {
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "\n# the app layer: an AppRollout moves Deployment cart to v2 as a canary at 20%%, judged by Prometheus; v2's build is broken\n")
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		fmt.Fprintln(out, "skipped: the canary's analysis asks Prometheus, and no prometheus binary is on PATH: apt-get install prometheus (or put one on PATH) and run the demo again")
		return nil
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Minute)
	defer cancel()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	set, err := clients.New(cfg)
	if err != nil {
		return err
	}
	if err := demoEnsureCRDs(ctx, cfg, out, crd.AppRollouts); err != nil {
		return err
	}
	if err := resetDemoApp(ctx, out, set); err != nil {
		return err
	}
	if err := demoApply(ctx, set, filepath.Join(dir, "rollout", "cart.yaml"), nil); err != nil {
		return err
	}
	fmt.Fprintf(out, "$ kubectl apply -f examples/demo/rollout/cart.yaml   # namespace %s, Deployment cart at v1 (5 replicas), its ServiceAccount and Role\n", demoAppNamespace)
	exporter, stopExporter, err := startDemoExporter(set.Clientset)
	if err != nil {
		return err
	}
	defer stopExporter()
	prom, err := startDemoPrometheus(ctx, promBin, dir, exporter)
	if err != nil {
		return err
	}
	defer prom.stop()
	fmt.Fprintf(out, "prometheus %s scrapes the demo's exporter at %s every second (the cart's pods are kwok's and serve nothing; the exporter reports their error ratio by version: 0.35 for v2)\n", prom.url, exporter)
	ctl, err := startDemoController(kubeconfig, "", demoAppNamespace, "upshift-demo-app-controller", "--app-poll", "500ms")
	if err != nil {
		return err
	}
	defer ctl.stop()
	fmt.Fprintf(out, "$ upshift controller --watch-namespaces %s   (in the background; log: %s)\n", demoAppNamespace, ctl.log)
	if err := demoRollouts(ctx, cmd, kubeconfig, dir, set, prom.url); err != nil {
		return fmt.Errorf("%w (controller log: %s)", err, ctl.log)
	}
	return nil
}

// demoRollouts rolls v2 (rolled back by its analysis) and v3 (promoted).
func demoRollouts(ctx context.Context, cmd *cobra.Command, kubeconfig, dir string, set *clients.Set, promURL string) error {
	out := cmd.OutOrStdout()
	c, err := demoAppClient(kubeconfig)
	if err != nil {
		return err
	}
	rollout := filepath.Join(dir, "rollout", "rollout.yaml")
	for _, v := range []string{"v2", "v3"} {
		if err := demoApply(ctx, set, rollout, func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, v, "spec", "version")
			setPrometheus(u, promURL)
		}); err != nil {
			return err
		}
		fmt.Fprintf(out, "\n$ kubectl apply -f examples/demo/rollout/rollout.yaml   # spec.version: %s\n$ kubectl get approllouts -n %s -w\n", v, demoAppNamespace)
		w := &appWatch{out: out, c: c}
		if v == demoBrokenVersion {
			if _, err := w.until(ctx, "RolledBack", func(a *v1alpha1.AppRollout) bool { return a.Status.Phase == v1alpha1.AppRolledBack }); err != nil {
				return err
			}
		} else {
			if _, err := w.until(ctx, "measured good three times at 20%", measuredGood(3)); err != nil {
				return err
			}
			fmt.Fprintf(out, "\n$ upshift app promote %s -n %s\n", demoAppName, demoAppNamespace)
			if code := runSubcommand(cmd, "app", "promote", demoAppName, "-n", demoAppNamespace, "--kubeconfig", kubeconfig); code != ExitOK {
				return fmt.Errorf("demo: upshift app promote exited %d", code)
			}
			if _, err := w.until(ctx, "Healthy", func(a *v1alpha1.AppRollout) bool { return a.Status.Phase == v1alpha1.AppHealthy }); err != nil {
				return err
			}
		}
		fmt.Fprintf(out, "\n$ upshift app get %s -n %s\n", demoAppName, demoAppNamespace)
		if code := runSubcommand(cmd, "app", "get", demoAppName, "-n", demoAppNamespace, "--kubeconfig", kubeconfig); code != ExitOK {
			return fmt.Errorf("demo: upshift app get exited %d", code)
		}
	}
	d, err := set.Clientset.AppsV1().Deployments(demoAppNamespace).Get(ctx, demoAppName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; img != "example.com/demo/cart:v3" || d.Spec.Replicas == nil || *d.Spec.Replicas != 5 {
		return fmt.Errorf("demo: Deployment cart runs %s, want example.com/demo/cart:v3 at 5 replicas", img)
	}
	fmt.Fprintln(out, "Deployment cart runs example.com/demo/cart:v3 at 5 replicas: v2 never took more than its 20%, v3 took it all")
	return nil
}

// measuredGood: the canary at its first step, measured good n times.
func measuredGood(n int32) func(*v1alpha1.AppRollout) bool {
	return func(a *v1alpha1.AppRollout) bool {
		an := a.Status.Analysis
		return a.Status.Phase == v1alpha1.AppDeploying && a.Status.CanaryStep == 0 && an != nil &&
			len(an.Metrics) == 1 && an.Metrics[0].Successful >= n
	}
}

// setPrometheus points the rollout's metrics at the demo's Prometheus.
func setPrometheus(u *unstructured.Unstructured, url string) {
	metrics, _, _ := unstructured.NestedSlice(u.Object, "spec", "upgradeStrategy", "canary", "analysis", "metrics")
	for _, m := range metrics {
		_ = unstructured.SetNestedField(m.(map[string]any), url, "provider", "prometheus", "address")
	}
	_ = unstructured.SetNestedSlice(u.Object, metrics, "spec", "upgradeStrategy", "canary", "analysis", "metrics")
}

// demoApply applies a file's objects server-side, each changed by edit
// first (nil: as written).
func demoApply(ctx context.Context, set *clients.Set, path string, edit func(*unstructured.Unstructured)) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	objs, err := source.Decode(b)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, o := range objs {
		if edit != nil {
			edit(o)
		}
		if _, err := set.Applier.Apply(ctx, o); err != nil {
			return fmt.Errorf("apply %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

// resetDemoApp deletes an earlier demo's app (a reused cluster), so the
// story starts from v1 again.
func resetDemoApp(ctx context.Context, out io.Writer, set *clients.Set) error {
	nss := set.Clientset.CoreV1().Namespaces()
	if err := nss.Delete(ctx, demoAppNamespace, metav1.DeleteOptions{}); apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	fmt.Fprintf(out, "deleting namespace %s of an earlier demo, to start from v1 again\n", demoAppNamespace)
	return waitGone(ctx, "namespace "+demoAppNamespace+" of an earlier demo", func() error {
		_, err := nss.Get(ctx, demoAppNamespace, metav1.GetOptions{})
		return err
	})
}

func demoAppClient(kubeconfig string) (client.Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: s})
}

// appWatch prints the rollout's line each time it changes, as kubectl
// get -w does.
type appWatch struct {
	out  io.Writer
	c    client.Client
	last string
}

func (w *appWatch) until(ctx context.Context, what string, done func(*v1alpha1.AppRollout) bool) (*v1alpha1.AppRollout, error) {
	if w.last == "" {
		fmt.Fprintf(w.out, "%-6s %-8s %-8s %-24s %-9s %s\n", "NAME", "VERSION", "TARGET", "PHASE", "STEP", "MESSAGE")
	}
	for {
		a := &v1alpha1.AppRollout{}
		if err := w.c.Get(ctx, types.NamespacedName{Namespace: demoAppNamespace, Name: demoAppName}, a); err != nil {
			return nil, err
		}
		msg, _, _ := strings.Cut(a.Status.Message, " (")
		line := fmt.Sprintf("%-6s %-8s %-8s %-24s %-9s %s", a.Name, dash(a.Status.CurrentVersion), dash(a.Status.TargetVersion), apps.Display(a), dash(apps.StepOf(a)), firstLine(msg))
		if line != w.last {
			fmt.Fprintln(w.out, line)
			w.last = line
		}
		if done(a) {
			return a, nil
		}
		if a.Status.Phase == v1alpha1.AppFailed && a.Status.Rollback != nil && a.Status.Rollback.Done {
			return nil, fmt.Errorf("demo: approllout cart's rollback failed: %v", a.Status.Rollback.Differences)
		}
		select {
		case <-ctx.Done():
			return nil, errors.Join(fmt.Errorf("demo: approllout cart not %s in time", what), ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}
