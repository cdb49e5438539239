package freeze_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients/clienttest"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/step"
	"github.com/upshift-dev/upshift/internal/steps/freeze"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// env is a test's clients, a frozen namespace, another one, and a runs
// namespace of its own.
type env struct {
	*clienttest.Env
	frozen, other, runs string
}

func newEnv(t *testing.T) *env {
	e := clienttest.New(t)
	return &env{Env: e, frozen: e.NS, other: e.Namespace(t), runs: e.Namespace(t)}
}

func (e *env) executor(t *testing.T, spec v1alpha1.FreezeStep, runsClient kubernetes.Interface) *freeze.Executor {
	t.Helper()
	build := func(c kubernetes.Interface) *freeze.Executor {
		ex, err := freeze.New(spec, "run-"+e.frozen, "hold", time.Minute, e.Applier, e.Dynamic, step.Runs{Namespace: e.runs, Client: c})
		if err != nil {
			t.Fatal(err)
		}
		return ex
	}
	lifter := build(e.Clientset) // whatever runsClient may do
	t.Cleanup(func() {
		if err := lifter.Finish(context.Background()); err != nil {
			t.Errorf("lift after the test: %v", err)
		}
	})
	return build(runsClient)
}

func (e *env) createConfigMap(ns, name string) error {
	_, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	return err
}

func configMapsCreate(namespaces ...string) v1alpha1.FreezeStep {
	return v1alpha1.FreezeStep{
		Rules:      []v1alpha1.FreezeRule{{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}, Operations: []string{"CREATE"}}},
		Namespaces: namespaces,
		Message:    "peerings are frozen during the upgrade",
	}
}

// Once Run reports success the freeze is enforced, with no delay to wait
// out: a create in the frozen namespace is denied with the plan's
// message; other namespaces, other operations and the runs namespace are
// left alone. Once Finish returns the create works at once, and both
// Run and Finish may be called again.
func TestFreezeDeniesFromRunUntilFinish(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := e.createConfigMap(e.frozen, "before"); err != nil {
		t.Fatal(err)
	}
	ex := e.executor(t, configMapsCreate(e.frozen), e.Clientset)

	targets, _ := ex.Targets(ctx)
	if got, want := fmt.Sprint(targets), fmt.Sprintf("[validatingadmissionpolicy %[1]s validatingadmissionpolicybinding %[1]s]", ex.Name()); got != want {
		t.Errorf("Targets = %s, want %s", got, want)
	}
	changes, err := ex.Preview(ctx)
	if err != nil || len(changes) != 2 || changes[0].Action != step.Create || changes[1].Action != step.Create {
		t.Fatalf("Preview = %+v, %v; want the policy and its binding created", changes, err)
	}

	for i := 1; i <= 2; i++ { // the second Run is a resumed step's
		res, err := ex.Run(ctx)
		if err != nil || res.Status != step.Succeeded {
			t.Fatalf("Run %d = %+v, %v", i, res, err)
		}
		if !strings.Contains(res.Message, "frozen until the run ends: CREATE of configmaps, secrets in namespaces "+e.frozen) {
			t.Errorf("Run %d message %q", i, res.Message)
		}
		err = e.createConfigMap(e.frozen, fmt.Sprintf("during-%d", i))
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "peerings are frozen during the upgrade") {
			t.Fatalf("create in the frozen namespace right after Run %d: %v; want denied with the message", i, err)
		}
	}
	if err := e.createConfigMap(e.other, "elsewhere"); err != nil {
		t.Errorf("create in another namespace: %v", err)
	}
	cm, err := e.Clientset.CoreV1().ConfigMaps(e.frozen).Get(ctx, "before", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"k": "v"}
	if _, err := e.Clientset.CoreV1().ConfigMaps(e.frozen).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Errorf("update (not frozen) in the frozen namespace: %v", err)
	}
	if _, err := e.Clientset.CoreV1().Secrets(e.runs).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "backup"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("a Secret in the runs namespace (where Upshift keeps its backups): %v", err)
	}

	for i := 1; i <= 2; i++ { // lifting what is lifted is success
		if err := ex.Finish(ctx); err != nil {
			t.Fatalf("Finish %d: %v", i, err)
		}
	}
	if err := e.createConfigMap(e.frozen, "after"); err != nil {
		t.Fatalf("create right after Finish: %v", err)
	}
	for _, r := range targets {
		if _, err := e.Applier.Get(ctx, r); !apierrors.IsNotFound(err) {
			t.Errorf("%s after Finish: %v; want gone", r, err)
		}
	}
}

// Without namespaces the freeze holds everywhere but in the runs
// namespace.
func TestFreezeEverywhereButTheRunsNamespace(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ex := e.executor(t, v1alpha1.FreezeStep{Rules: []v1alpha1.FreezeRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Operations: []string{"CREATE"}}}}, e.Clientset)
	if res, err := ex.Run(ctx); err != nil || res.Status != step.Succeeded {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	for _, ns := range []string{e.frozen, e.other} {
		_, err := e.Clientset.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "frozen by Upshift while run run-"+e.frozen+" upgrades this cluster (step hold)") {
			t.Errorf("secret in %s: %v; want denied with the default message", ns, err)
		}
	}
	if _, err := e.Clientset.CoreV1().Secrets(e.runs).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "backup"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("a Secret in the runs namespace: %v", err)
	}
}

// A cluster-scoped kind (Liqo's ForeignClusters, here ClusterRoles) is
// denied with the plan's message, as a namespaced one is, not with an
// error of the policy's expression.
func TestFreezeClusterScopedKindSaysThePlansMessage(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ex := e.executor(t, v1alpha1.FreezeStep{
		Rules:   []v1alpha1.FreezeRule{{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"}, Operations: []string{"CREATE"}}},
		Message: "no new cluster role during the upgrade",
	}, e.Clientset)
	if res, err := ex.Run(ctx); err != nil || res.Status != step.Succeeded {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "frozen-" + e.frozen}}
	_, err := e.Clientset.RbacV1().ClusterRoles().Create(ctx, cr, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "no new cluster role during the upgrade") || strings.Contains(err.Error(), "resulted in error") {
		t.Errorf("create a cluster role: %v; want denied with the plan's message", err)
	}
}

// A driver that may not create Secrets in the runs namespace cannot prove
// the freeze enforced: Run says so and what to grant.
func TestFreezeProbeForbiddenNamesTheFix(t *testing.T) {
	e := newEnv(t)
	cfg := rest.CopyConfig(testenv.Cluster(t).RESTConfig())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "nobody"}
	nobody, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ex := e.executor(t, configMapsCreate(e.frozen), nobody)
	_, err = ex.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "grant create on secrets in "+e.runs) {
		t.Fatalf("Run = %v; want an error naming the grant", err)
	}
}
