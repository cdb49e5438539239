package lease

import (
	"context"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
)

type fixture struct {
	c   *localcluster.Cluster
	cs  kubernetes.Interface
	ctx context.Context
	ns  string
}

// setup gives the test its own namespace, so tests run in parallel.
func setup(t *testing.T) fixture {
	t.Helper()
	c := testenv.Cluster(t)
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	ns := testNamespace("lease", t)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return fixture{c: c, cs: cs, ctx: ctx, ns: ns}
}

func (f fixture) config(id Identity) Config {
	return Config{Namespace: f.ns, Duration: testDuration, RenewEvery: testRenew, Identity: id}
}

// userClient is a clientset, and its config, that authenticates as user.
func userClient(t *testing.T, f fixture, user string) (*rest.Config, kubernetes.Interface) {
	t.Helper()
	rc, err := f.c.UserRESTConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return rc, cs
}

// grant gives user rules in f's namespace through a Role and a RoleBinding
// both called name; deleting the binding revokes them.
func grant(t *testing.T, f fixture, name, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}, Rules: rules}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}},
	}
	if _, err := f.cs.RbacV1().Roles(f.ns).Create(f.ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.cs.RbacV1().RoleBindings(f.ns).Create(f.ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The API server's authorizer learns of the binding from a watch:
	// wait until it allows what was granted, or the test's first request
	// can be refused.
	for _, r := range rules {
		attrs := &authorizationv1.ResourceAttributes{Namespace: f.ns, Verb: r.Verbs[0], Group: r.APIGroups[0], Resource: r.Resources[0]}
		err := wait.PollUntilContextTimeout(f.ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			sar, err := f.cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: attrs},
			}, metav1.CreateOptions{})
			return err == nil && sar.Status.Allowed, nil
		})
		if err != nil {
			t.Fatalf("%s is not allowed to %s %s a moment after the grant: %v", user, attrs.Verb, attrs.Resource, err)
		}
	}
}

// holdLease lets a user hold the lease.
var holdLease = rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update"}}

// takeOver writes id into f's Lease as another process would, retrying
// while the current holder's renewals conflict with the write.
func takeOver(t *testing.T, f fixture, id Identity) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		l, err := f.cs.CoordinationV1().Leases(f.ns).Get(f.ctx, DefaultName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		stealLease(l, holderIdentity(id, "00"), 30)
		_, err = f.cs.CoordinationV1().Leases(f.ns).Update(f.ctx, l, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func alice() Identity { return Identity{User: "alice", Host: "host-1", PID: 1111, Run: "demo-1.1.0"} }
func bob() Identity   { return Identity{User: "bob", Host: "host-2", PID: 2222, Run: "demo-1.2.0"} }

func holder(t *testing.T, f fixture) (Identity, bool) {
	t.Helper()
	id, valid, err := Holder(f.ctx, f.cs, f.ns, "")
	if err != nil {
		t.Fatal(err)
	}
	return id, valid
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func stealLease(l *coordinationv1.Lease, holder string, seconds int32) {
	now := metav1.NewMicroTime(time.Now())
	l.Spec.HolderIdentity = &holder
	l.Spec.LeaseDurationSeconds = &seconds
	l.Spec.RenewTime = &now
	l.Spec.AcquireTime = &now
}
