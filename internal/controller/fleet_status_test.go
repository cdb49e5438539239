package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// A fleet's status saved behind the reconciles never lets the rollout run
// on with nothing recorded: when the API server refuses the save, the
// failure is kept and the fleet's reconcile is woken; a save in line
// (saveNow) keeps failing while the refusal lasts and stores what was
// decided once it ends; later decisions go out behind the reconciles
// again.
func TestFleetStatusSaveThatFailsStopsUntilSavedInLine(t *testing.T) {
	cfg := testenv.Cluster(t).RESTConfig()
	testenv.InstallCRDs(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	scheme, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := testenv.Namespace(t, ctx, cs, "fleet-status")
	cv := &v1alpha1.ClusterVersion{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: ns},
		Spec: v1alpha1.ClusterVersionSpec{
			RequiredAvailableCount: 1,
			OpsEndpoint:            v1alpha1.OpsEndpoint{Endpoint: "127.0.0.1:1", Insecure: true},
			Clusters:               []v1alpha1.FleetCluster{{ID: "a", Version: "1.1.0"}, {ID: "b", Version: "1.1.0"}},
		},
	}
	if err := c.Create(ctx, cv); err != nil {
		t.Fatalf("create ClusterVersion: %v", err)
	}
	key := types.NamespacedName{Namespace: ns, Name: cv.Name}
	woken := make(chan types.NamespacedName, 8)
	w := &fleetStatusWriter{client: c, log: logr.Discard(), wake: func(k types.NamespacedName) { woken <- k }}
	s := newFleetStatus(key, cv.UID, cv.Status)

	refuse := refuseStatusWrites(t, ctx, cs, ns)
	decided := v1alpha1.ClusterVersionStatus{Phase: v1alpha1.FleetProgressing, Desired: 2, Message: "decided while the API server refuses"}
	w.record(s, decided)
	select {
	case k := <-woken:
		if k != key {
			t.Fatalf("woke %s, want %s", k, key)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a refused save did not wake the fleet's reconcile")
	}
	if err := s.failure(); err == nil || !strings.Contains(err.Error(), "status writes refused by the test") {
		t.Fatalf("failure() = %v, want the API server's refusal", err)
	}
	if err := w.saveNow(ctx, s); err == nil {
		t.Fatal("saveNow succeeded while the API server refuses status writes")
	}
	if got := stored(t, ctx, c, key); got.Message == decided.Message {
		t.Fatal("the refused status is stored")
	}

	refuse()
	deadline := time.Now().Add(30 * time.Second)
	for err := w.saveNow(ctx, s); err != nil; err = w.saveNow(ctx, s) {
		if time.Now().After(deadline) {
			t.Fatalf("saveNow after the refusal ended: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := s.failure(); err != nil {
		t.Fatalf("failure() after a save in line succeeded: %v", err)
	}
	if got := stored(t, ctx, c, key); got.Message != decided.Message || got.Phase != decided.Phase || got.Desired != 2 {
		t.Fatalf("stored status %q %s desired %d, want what was decided", got.Message, got.Phase, got.Desired)
	}

	later := decided
	later.Done, later.Message = 1, "decided after the save in line"
	w.record(s, later)
	for got := stored(t, ctx, c, key); got.Message != later.Message; got = stored(t, ctx, c, key) {
		if time.Now().After(deadline.Add(30 * time.Second)) {
			t.Fatalf("the writer did not save a later decision: stored %q", got.Message)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func stored(t *testing.T, ctx context.Context, c client.Client, key types.NamespacedName) v1alpha1.ClusterVersionStatus {
	t.Helper()
	cv := &v1alpha1.ClusterVersion{}
	if err := c.Get(ctx, key, cv); err != nil {
		t.Fatalf("get ClusterVersion: %v", err)
	}
	return cv.Status
}

// refuseStatusWrites makes the API server deny every write of
// ClusterVersions' status in ns (an admission policy, as an operator's
// policy or a quota would), once it is in force; the returned func lifts
// it.
func refuseStatusWrites(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string) func() {
	t.Helper()
	name := "refuse-fleet-status-" + ns
	fail := admissionregistrationv1.Fail
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
						Rule: admissionregistrationv1.Rule{
							APIGroups:   []string{v1alpha1.GroupVersion.Group},
							APIVersions: []string{"*"},
							Resources:   []string{"clusterversions/status"},
						},
					},
				}},
			},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "status writes refused by the test"}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			},
		},
	}
	api := cs.AdmissionregistrationV1()
	if _, err := api.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create policy: %v", err)
	}
	if _, err := api.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create binding: %v", err)
	}
	lift := func() {
		// Its own context: it also runs at cleanup, after the test's.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, err := range []error{
			api.ValidatingAdmissionPolicyBindings().Delete(ctx, name, metav1.DeleteOptions{}),
			api.ValidatingAdmissionPolicies().Delete(ctx, name, metav1.DeleteOptions{}),
		} {
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("lift the policy: %v", err)
			}
		}
	}
	t.Cleanup(lift)
	// The API server compiles a new policy within a second or so: wait
	// until it denies, so the test's first save meets the refusal.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := cs.CoreV1().RESTClient().Patch(types.MergePatchType).
			AbsPath("/apis", v1alpha1.GroupVersion.Group, v1alpha1.GroupVersion.Version, "namespaces", ns, "clusterversions", "fleet", "status").
			Body([]byte(`{"status":{"message":"probe"}}`)).Do(ctx).Get()
		if err != nil && strings.Contains(err.Error(), "status writes refused by the test") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the policy is not in force after 30s (last answer: %v)", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return lift
}
