package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/upshift-dev/upshift/config/crd"
	"github.com/upshift-dev/upshift/internal/crds"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/bundle"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/redact"
)

// The controller part of the demo: the 2.0.0 plan file, bundled for the
// cluster (its files served over HTTPS), applied as an UpgradePlan
// resource that `upshift controller` runs as a ServiceAccount.
const (
	demoPlansNamespace = "demo-upgrades"
	demoServiceAccount = "demo-upgrader"
	demoControllerPlan = "demo-2.0.0-controller"
)

var plansResource = v1alpha1.GroupVersion.WithResource("upgradeplans")

func demoController(cmd *cobra.Command, kubeconfig, dir string) error {
	out := cmd.OutOrStdout()
	ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Minute)
	defer cancel()
	fmt.Fprintf(out, "\n# the controller path: the same 2.0.0 upgrade as an UpgradePlan resource, run by `upshift controller`\n")
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	if err := demoInstallCRDs(ctx, cfg, out); err != nil {
		return err
	}
	l, err := plan.Load(filepath.Join(dir, "2.0.0", "plan.yaml"))
	if err != nil {
		return err
	}
	srv, err := bundle.Serve()
	if err != nil {
		return err
	}
	defer srv.Close()
	b, err := bundle.Make(ctx, l, srv.URL)
	if err != nil {
		return err
	}
	srv.Publish(b.Files)
	fmt.Fprintf(out, "the plan names files, which a controller cannot read: its %d files are served at %s and the plan fetches them by URL\n", len(b.Files), srv.URL)
	caFile := filepath.Join(dir, "bundle-ca.pem")
	if err := os.WriteFile(caFile, srv.CA, 0o600); err != nil {
		return err
	}

	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := demoServiceAccountWithRights(ctx, cs); err != nil {
		return err
	}
	ctl, err := startDemoController(kubeconfig, caFile, demoPlansNamespace, "upshift-demo-controller")
	if err != nil {
		return err
	}
	defer ctl.stop()
	logPath := ctl.log
	fmt.Fprintf(out, "$ upshift controller --watch-namespaces %s   (in the background; log: %s)\n", demoPlansNamespace, logPath)

	if err := deleteCLIRunJobs(ctx, out, cs); err != nil {
		return err
	}
	plans := dyn.Resource(plansResource).Namespace(demoPlansNamespace)
	if err := applyDemoPlan(ctx, out, plans, b.Plan); err != nil {
		return err
	}
	fmt.Fprintf(out, "$ kubectl get upgradeplans -n %s -w\n", demoPlansNamespace)
	final, err := followPlan(ctx, out, plans)
	if err != nil {
		return fmt.Errorf("%w (controller log: %s)", err, logPath)
	}
	if !meta.IsStatusConditionTrue(final.Status.Conditions, v1alpha1.ConditionRolledBack) {
		return fmt.Errorf("demo: the controller's run of %s ended %s, expected rolled back (controller log: %s)", demoControllerPlan, final.Status.Phase, logPath)
	}
	fmt.Fprintf(out, "\n$ kubectl get events -n %s --field-selector type=Warning\n", demoPlansNamespace)
	return printWarnings(ctx, out, cs)
}

// deleteCLIRunJobs deletes the migration Jobs the CLI's 2.0.0 run left
// (kept for their logs). A run never takes another run's Job as its own
// migration, so the operator deletes them first, as the job step asks.
func deleteCLIRunJobs(ctx context.Context, out io.Writer, cs kubernetes.Interface) error {
	jobs := []string{"demo-migrate-2-0-0", "demo-migrate-2-0-0-down"}
	fmt.Fprintf(out, "$ kubectl delete job -n demo-system %s   (the CLI run's migration Jobs: a run runs its own)\n", strings.Join(jobs, " "))
	background := metav1.DeletePropagationBackground
	for _, j := range jobs {
		if err := cs.BatchV1().Jobs("demo-system").Delete(ctx, j, metav1.DeleteOptions{PropagationPolicy: &background}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// applyDemoPlan creates the bundled plan as the UpgradePlan the
// controller runs as the demo's ServiceAccount, in place of an earlier
// demo's.
func applyDemoPlan(ctx context.Context, out io.Writer, plans dynamic.ResourceInterface, p *v1alpha1.UpgradePlan) error {
	p.Name, p.Namespace = demoControllerPlan, demoPlansNamespace
	p.Spec.ServiceAccountName = demoServiceAccount
	p.APIVersion, p.Kind = v1alpha1.APIVersion, v1alpha1.PlanKind
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
	if err != nil {
		return err
	}
	if err := deleteEarlierPlan(ctx, plans); err != nil {
		return err
	}
	fmt.Fprintf(out, "$ kubectl apply -n %s -f %s.yaml   (serviceAccountName: %s)\n", demoPlansNamespace, demoControllerPlan, demoServiceAccount)
	if _, err := plans.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create UpgradePlan %s: %w", demoControllerPlan, err)
	}
	return nil
}

// printWarnings lists the plan's Warning events once its RolledBack event
// is among them: the controller records events a moment after the status
// that says the run ended, so a list made at once may miss it.
func printWarnings(ctx context.Context, out io.Writer, cs kubernetes.Interface) error {
	var events *corev1.EventList
	for deadline := time.Now().Add(15 * time.Second); ; {
		var err error
		events, err = cs.CoreV1().Events(demoPlansNamespace).List(ctx, metav1.ListOptions{FieldSelector: "type=Warning,involvedObject.name=" + demoControllerPlan})
		if err != nil {
			return err
		}
		if hasReason(events.Items, v1alpha1.ReasonRolledBack) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, e := range events.Items {
		fmt.Fprintf(out, "%s  %s\n", e.Reason, firstLine(e.Message))
	}
	return nil
}

func hasReason(events []corev1.Event, reason string) bool {
	for _, e := range events {
		if e.Reason == reason {
			return true
		}
	}
	return false
}

// followPlan prints the plan's columns on every change, as `kubectl get
// -w` does, approves the approval step as an operator would, and returns
// the plan once its run stopped.
func followPlan(ctx context.Context, out io.Writer, plans dynamic.ResourceInterface) (*v1alpha1.UpgradePlan, error) {
	tw := tabwriter.NewWriter(out, 0, 4, 3, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tPHASE\tSTAGE\tSTEP")
	tw.Flush()
	w, err := plans.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + demoControllerPlan})
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	last, approved := "", false
	for ev := range w.ResultChan() {
		if ev.Type != watch.Added && ev.Type != watch.Modified {
			continue
		}
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		p := &v1alpha1.UpgradePlan{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, p); err != nil {
			return nil, err
		}
		row := fmt.Sprintf("%s\t%s\t%s\t%s\t%s", p.Name, p.Spec.Version, p.Status.Phase, p.Status.Stage, p.Status.Step)
		if row != last && p.Status.Phase != "" {
			fmt.Fprintln(tw, row)
			tw.Flush()
			last = row
		}
		if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionWaitingForApproval); c != nil && c.Status == metav1.ConditionTrue && !approved {
			fmt.Fprintf(out, "$ kubectl annotate upgradeplan %s upshift.dev/approve=approve   (%s)\n", p.Name, c.Message)
			patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"approve"}}}`, v1alpha1.AnnotationApprove)
			if _, err := plans.Patch(ctx, p.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				return nil, err
			}
			approved = true
		}
		if meta.IsStatusConditionTrue(p.Status.Conditions, v1alpha1.ConditionStalled) || meta.IsStatusConditionTrue(p.Status.Conditions, v1alpha1.ConditionReady) {
			return p, nil
		}
	}
	return nil, fmt.Errorf("demo: stopped watching UpgradePlan %s before its run ended: %w", demoControllerPlan, context.Cause(ctx))
}

// demoServiceAccountWithRights makes the plan's ServiceAccount. The demo
// platform spans namespaces and CRDs, so the demo binds it to
// cluster-admin; a real plan's ServiceAccount gets what its plan needs
// (upshift plan lists it).
func demoServiceAccountWithRights(ctx context.Context, cs kubernetes.Interface) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: demoPlansNamespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: demoServiceAccount}}
	if _, err := cs.CoreV1().ServiceAccounts(demoPlansNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: demoServiceAccount},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: demoServiceAccount, Namespace: demoPlansNamespace}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// deleteEarlierPlan deletes an earlier demo's plan (with --reuse) and
// waits until it is gone: its finalizer holds it until the controller
// lets it go.
func deleteEarlierPlan(ctx context.Context, plans dynamic.ResourceInterface) error {
	if err := plans.Delete(ctx, demoControllerPlan, metav1.DeleteOptions{}); err != nil {
		return nil // none
	}
	return waitGone(ctx, "the earlier demo's UpgradePlan "+demoControllerPlan, func() error {
		_, err := plans.Get(ctx, demoControllerPlan, metav1.GetOptions{})
		return err
	})
}

// waitGone asks get until it answers NotFound.
func waitGone(ctx context.Context, what string, get func() error) error {
	for {
		if apierrors.IsNotFound(get()) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s is still being deleted: %w", what, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// demoControllerProcess is the controller the demo runs in the background.
type demoControllerProcess struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// startDemoController runs this binary's controller in the background
// on namespace watch, its log in the temporary directory as name.log,
// trusting the bundle server's certificate (SSL_CERT_FILE; "": the
// system's).
func startDemoController(kubeconfig, caFile, watch, name string, extra ...string) (*demoControllerProcess, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	p := &demoControllerProcess{log: filepath.Join(os.TempDir(), name+".log"), done: make(chan struct{})}
	logFile, err := os.Create(p.log)
	if err != nil {
		return nil, err
	}
	p.cmd = exec.Command(self, append([]string{"controller", "--kubeconfig", kubeconfig, "--watch-namespaces", watch,
		"--metrics-addr", "0", "--health-probe-addr", "0"}, extra...)...)
	p.cmd.Env = os.Environ()
	if caFile != "" {
		p.cmd.Env = append(p.cmd.Env, "SSL_CERT_FILE="+caFile)
	}
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	if err := p.cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	go func() { _ = p.cmd.Wait(); logFile.Close(); close(p.done) }()
	return p, nil
}

// stop stops the controller as Kubernetes stops a pod: SIGTERM (it saves
// any run it drives and lets go of its leases), then a grace period.
func (p *demoControllerProcess) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(redact.Text(s), "\n")
	return s
}

// demoInstallCRDs installs (or checks) the UpgradePlan and UpgradeRun
// CRDs, as `upshift crds | kubectl apply -f -` would.
func demoInstallCRDs(ctx context.Context, cfg *rest.Config, out io.Writer) error {
	return demoEnsureCRDs(ctx, cfg, out, crd.UpgradePlans, crd.UpgradeRuns, crd.PlatformUpgrades)
}

// demoEnsureCRDs installs (or checks) the named CRDs of this binary.
func demoEnsureCRDs(ctx context.Context, cfg *rest.Config, out io.Writer, names ...string) error {
	c, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, name := range names {
		o, err := crds.Ensure(ctx, c, name)
		if err != nil {
			return err
		}
		if n := o.Notice(name); n != "" {
			fmt.Fprintln(out, n)
		}
	}
	return nil
}
