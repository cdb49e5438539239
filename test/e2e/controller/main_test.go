// Package controller_test holds the controller's acceptance tests: the
// real `upshift controller` process against the real local control plane,
// driving UpgradePlan resources, judged by the plans' conditions and
// events, the cluster's objects and the API server's audit log.
//
// The tests share one cluster. Each has its own namespace for its plan
// and workloads and one for its runs, backups and leases, and starts its
// controllers with --watch-namespaces and --namespace on those, so
// controllers of parallel tests never see each other's plans.
package controller_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var (
	plansGVR = v1alpha1.GroupVersion.WithResource("upgradeplans")
)

// env is one test's share of the cluster.
type env struct {
	t    *testing.T
	c    *localcluster.Cluster
	cfg  *rest.Config
	cs   kubernetes.Interface
	dyn  dynamic.Interface
	ctx  context.Context
	ns   string // the plan's namespace: its workloads and ServiceAccount
	runs string // the controller's namespace: runs, backups, leases
	bin  string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	testenv.SkipIfShort(t)
	c := testenv.Cluster(t)
	cfg := c.RESTConfig()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	testenv.InstallCRDs(t, cfg)
	return &env{t: t, c: c, cfg: cfg, cs: cs, dyn: dyn, ctx: ctx, bin: testenv.UpshiftBinary(t),
		ns: testenv.Namespace(t, ctx, cs, "ctl"), runs: testenv.Namespace(t, ctx, cs, "ctl-runs")}
}

// controllerProc is one `upshift controller` process.
type controllerProc struct {
	*testenv.Process
	user        string
	metricsAddr string
}

// startController runs a controller as its own client-certificate user
// (so the audit log tells its requests apart) on the test's namespaces.
func (e *env) startController(user string, extraEnv []string, extraArgs ...string) *controllerProc {
	e.t.Helper()
	kc, err := e.c.UserKubeconfig(user, "system:masters")
	if err != nil {
		e.t.Fatal(err)
	}
	p := &controllerProc{user: user, metricsAddr: testenv.FreeAddr(e.t)}
	args := append([]string{"controller", "--kubeconfig", kc,
		"--namespace", e.runs, "--watch-namespaces", e.ns,
		"--metrics-addr", p.metricsAddr, "--health-probe-addr", testenv.FreeAddr(e.t),
		"--lease-duration", "3s", "--lease-renew", "1s", "--debug"}, extraArgs...)
	cmd := exec.Command(e.bin, args...)
	cmd.Env = append(append(os.Environ(), "KUBECONFIG="), extraEnv...)
	p.Process = testenv.Start(e.t, "controller "+user, cmd)
	return p
}

// createPlan creates the plan in the test's namespace.
func (e *env) createPlan(p *v1alpha1.UpgradePlan) {
	e.t.Helper()
	p.APIVersion, p.Kind, p.Namespace = v1alpha1.APIVersion, v1alpha1.PlanKind, e.ns
	m, err := kruntime.DefaultUnstructuredConverter.ToUnstructured(p)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.dyn.Resource(plansGVR).Namespace(e.ns).Create(e.ctx, &unstructured.Unstructured{Object: m}, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
		e.t.Fatalf("create UpgradePlan %s: %v", p.Name, err)
	}
}

func (e *env) getPlan(name string) *v1alpha1.UpgradePlan {
	e.t.Helper()
	u, err := e.dyn.Resource(plansGVR).Namespace(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("get UpgradePlan %s: %v", name, err)
	}
	p := &v1alpha1.UpgradePlan{}
	if err := kruntime.DefaultUnstructuredConverter.FromUnstructured(u.Object, p); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// waitCondition waits until the plan's condition has the status (and,
// when reason is set, the reason) at the plan's current generation.
func (e *env) waitCondition(name, typ string, status metav1.ConditionStatus, reason string, timeout time.Duration) *v1alpha1.UpgradePlan {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	var p *v1alpha1.UpgradePlan
	for time.Now().Before(deadline) {
		p = e.getPlan(name)
		c := meta.FindStatusCondition(p.Status.Conditions, typ)
		if c != nil && c.Status == status && (reason == "" || c.Reason == reason) && p.Status.ObservedGeneration == p.Generation {
			return p
		}
		time.Sleep(200 * time.Millisecond)
	}
	e.t.Fatalf("UpgradePlan %s: condition %s is not %s %s after %s; status:\n%s", name, typ, status, reason, timeout, toYAML(p.Status))
	return nil
}

// annotate sets an annotation on the plan with `kubectl annotate
// --overwrite`, as an operator does.
func (e *env) annotate(name, key, value string) {
	e.t.Helper()
	if out, err := e.kubectl("annotate", "-n", e.ns, "--overwrite", "upgradeplan/"+name, key+"="+value); err != nil {
		e.t.Fatalf("kubectl annotate upgradeplan/%s %s=%s: %v\n%s", name, key, value, err, out)
	}
}

// events lists the plan's events as "Type Reason: message".
func (e *env) events(name string) []string {
	e.t.Helper()
	list, err := e.cs.CoreV1().Events(e.ns).List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, ev := range list.Items {
		out = append(out, ev.Type+" "+ev.Reason+": "+ev.Message)
	}
	return out
}

// kubectl runs the cluster's kubectl as the test's admin.
func (e *env) kubectl(args ...string) (string, error) { return e.kubectlStdin("", args...) }

// kubectlStdin runs kubectl with stdin.
func (e *env) kubectlStdin(stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(e.ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.c.Binaries().Path("kubectl"), append([]string{"--kubeconfig", e.c.KubeconfigPath()}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG=")
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// writesBy lists the audit log's writes by user in namespace ns (every
// namespace when ns is ""), as "verb resource/name".
func (e *env) writesBy(user, ns string) []string {
	e.t.Helper()
	events, err := e.c.ReadAudit()
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, ev := range localcluster.ByUser(events, user) {
		if !ev.IsWrite() || ev.DryRun() {
			continue
		}
		if ns != "" && ev.ObjectRef.Namespace != ns {
			continue
		}
		out = append(out, ev.Verb+" "+ev.Object())
	}
	return out
}

// changes drops the events from a list of writes: they record what
// happened, they change nothing.
func changes(writes []string) []string {
	var out []string
	for _, w := range writes {
		if !strings.Contains(w, " events ") && !strings.HasPrefix(w, "create events ") && !strings.HasPrefix(w, "patch events ") {
			out = append(out, w)
		}
	}
	return out
}

func toYAML(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func contains(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
