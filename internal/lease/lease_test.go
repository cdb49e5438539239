package lease

import (
	"context"
	"errors"
	"strings"
	"syscall"
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

func TestReleaseFreesTheLeaseAtOnce(t *testing.T) {
	t.Parallel()
	f := setup(t)
	if id, valid := holder(t, f); valid || id != (Identity{}) {
		t.Fatalf("Holder before any Acquire = %v, %v", id, valid)
	}
	a, err := Acquire(f.ctx, f.cs, f.config(alice()))
	if err != nil {
		t.Fatal(err)
	}
	if id, valid := holder(t, f); !valid || id != alice() {
		t.Fatalf("Holder = %v (valid %v), want alice", id, valid)
	}
	// Held past its duration: renewal keeps it.
	time.Sleep(testDuration + testRenew)
	if id, valid := holder(t, f); !valid || id != alice() || closed(a.Lost()) {
		t.Fatalf("after a duration: Holder = %v (valid %v), lost %v", id, valid, closed(a.Lost()))
	}

	a.Release()
	if _, valid := holder(t, f); valid {
		t.Fatal("Holder still valid after Release")
	}
	if closed(a.Lost()) {
		t.Error("Release closed Lost")
	}
	if a.Context().Err() == nil || errors.Is(context.Cause(a.Context()), ErrLost) {
		t.Errorf("after Release: Context err %v, cause %v", a.Context().Err(), context.Cause(a.Context()))
	}
	a.Release() // twice is harmless

	start := time.Now()
	b, err := Acquire(f.ctx, f.cs, f.config(bob()))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	if d := time.Since(start); d > testRenew {
		t.Errorf("Acquire after Release took %s, want at once", d)
	}
	if id, valid := holder(t, f); !valid || id != bob() {
		t.Fatalf("Holder = %v (valid %v), want bob", id, valid)
	}
}

// A second process is refused while the first keeps renewing, with an
// error that names the first: user, host, pid and run.
func TestRefusedWhileHolderRenews(t *testing.T) {
	t.Parallel()
	f := setup(t)
	proc := startHolder(t, f.c.KubeconfigPath(), f.ns, "demo-1.1.0")
	start := time.Now()
	_, err := Acquire(f.ctx, f.cs, f.config(bob()))
	waited := time.Since(start)
	if !errors.Is(err, ErrHeld) {
		t.Fatalf("Acquire = %v, want ErrHeld", err)
	}
	var he *HeldError
	if !errors.As(err, &he) {
		t.Fatalf("Acquire error %T is no *HeldError", err)
	}
	want := CurrentIdentity("demo-1.1.0")
	want.PID = proc.Process.Pid
	if he.Holder != want {
		t.Errorf("HeldError names %#v, want %#v", he.Holder, want)
	}
	if !strings.Contains(err.Error(), want.String()) {
		t.Errorf("error %q does not name %q", err, want)
	}
	if waited < testDuration || waited > testDuration+4*testRenew {
		t.Errorf("refused after %s, want about one duration (%s)", waited, testDuration)
	}
	if id, valid := holder(t, f); !valid || id != want {
		t.Errorf("after the refusal Holder = %v (valid %v), want the first process", id, valid)
	}
}

// A holder that dies without releasing (SIGKILL) stops renewing; the next
// Acquire takes over once the lease expires.
func TestTakeOverFromKilledHolder(t *testing.T) {
	t.Parallel()
	f := setup(t)
	proc := startHolder(t, f.c.KubeconfigPath(), f.ns, "demo-1.1.0")
	if err := proc.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = proc.Wait()
	if id, valid := holder(t, f); !valid || id.PID != proc.Process.Pid {
		t.Fatalf("right after the kill Holder = %v (valid %v), want the killed process", id, valid)
	}
	start := time.Now()
	h, err := Acquire(f.ctx, f.cs, f.config(bob()))
	took := time.Since(start)
	if err != nil {
		t.Fatalf("Acquire after the holder was killed: %v", err)
	}
	defer h.Release()
	if took < testDuration-testRenew || took > testDuration+4*testRenew {
		t.Errorf("took over after %s, want about one duration (%s)", took, testDuration)
	}
	if id, valid := holder(t, f); !valid || id != bob() {
		t.Fatalf("Holder = %v (valid %v), want bob", id, valid)
	}
}

// Losing the right to renew (RBAC revoked) ends the lease before it could
// expire for others: Lost closes, Context is cancelled with ErrLost.
func TestLostWhenCredentialsRevoked(t *testing.T) {
	t.Parallel()
	f := setup(t)
	user := "lease-holder-" + f.ns
	grant(t, f, "lease", user, holdLease)
	_, ucs := userClient(t, f, user)
	h, err := Acquire(f.ctx, ucs, f.config(alice()))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	time.Sleep(2 * testRenew)
	if closed(h.Lost()) {
		t.Fatal("lost while renewing fine")
	}

	if err := f.cs.RbacV1().RoleBindings(f.ns).Delete(f.ctx, "lease", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	select {
	case <-h.Lost():
	case <-time.After(testDuration + 2*testRenew):
		t.Fatalf("Lost not closed %s after the credentials were revoked", time.Since(revoked))
	}
	if d := time.Since(revoked); d >= testDuration {
		t.Errorf("lost after %s: not before the lease expired (%s)", d, testDuration)
	}
	cause := context.Cause(h.Context())
	if h.Context().Err() == nil || !errors.Is(cause, ErrLost) {
		t.Fatalf("Context after loss: err %v, cause %v", h.Context().Err(), cause)
	}
	if !strings.Contains(cause.Error(), "forbidden") {
		t.Errorf("cause %q does not say why", cause)
	}
	start := time.Now()
	h.Release()
	if d := time.Since(start); d > testDuration {
		t.Errorf("Release after loss took %s", d)
	}
}

// Another process writing itself into the Lease ends ours at once, and
// our Release does not clear its record.
func TestLostWhenLeaseTakenOver(t *testing.T) {
	t.Parallel()
	f := setup(t)
	h, err := Acquire(f.ctx, f.cs, f.config(alice()))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()

	mallory := Identity{User: "mallory", Host: "elsewhere", PID: 7, Run: "other"}
	takeOver(t, f, mallory)
	stolen := time.Now()
	select {
	case <-h.Lost():
	case <-time.After(testDuration):
		t.Fatalf("Lost not closed %s after the lease was taken over", time.Since(stolen))
	}
	if d := time.Since(stolen); d > 3*testRenew {
		t.Errorf("noticed the takeover after %s, want within a renewal or two", d)
	}
	if cause := context.Cause(h.Context()); !errors.Is(cause, ErrLost) || !strings.Contains(cause.Error(), mallory.String()) {
		t.Errorf("cause %v does not name %s", cause, mallory)
	}
	h.Release()
	if id, valid := holder(t, f); !valid || id != mallory {
		t.Fatalf("after our Release Holder = %v (valid %v), want mallory still", id, valid)
	}
}

func stealLease(l *coordinationv1.Lease, holder string, seconds int32) {
	now := metav1.NewMicroTime(time.Now())
	l.Spec.HolderIdentity = &holder
	l.Spec.LeaseDurationSeconds = &seconds
	l.Spec.RenewTime = &now
	l.Spec.AcquireTime = &now
}

func TestAcquireStopsWithContext(t *testing.T) {
	t.Parallel()
	f := setup(t)
	a, err := Acquire(f.ctx, f.cs, f.config(alice()))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	ctx, cancel := context.WithTimeout(f.ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = Acquire(ctx, f.cs, f.config(bob()))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire with an ending context = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Acquire returned %s after its context ended", d-300*time.Millisecond)
	}
	if id, valid := holder(t, f); !valid || id != alice() {
		t.Fatalf("Holder = %v (valid %v), want alice", id, valid)
	}
	if closed(a.Lost()) || a.Context().Err() != nil {
		t.Fatal("the refused Acquire cost the holder its lease")
	}
}

// The held lease does not end with the context Acquire was given: an
// interrupted command still records where it stopped.
func TestLeaseOutlivesAcquireContext(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx, cancel := context.WithCancel(f.ctx)
	h, err := Acquire(ctx, f.cs, f.config(alice()))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	cancel()
	time.Sleep(testDuration + testRenew)
	if closed(h.Lost()) || h.Context().Err() != nil {
		t.Fatalf("lease ended with Acquire's context: %v", context.Cause(h.Context()))
	}
	if id, valid := holder(t, f); !valid || id != alice() {
		t.Fatalf("Holder = %v (valid %v), want alice", id, valid)
	}
}

// Errors no wait cures come back at once, not after a lease duration.
func TestAcquireFailsFast(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, nobody := userClient(t, f, "nobody-"+f.ns)
	for _, tt := range []struct {
		name string
		cs   kubernetes.Interface
		cfg  Config
		want string
	}{
		{"forbidden", nobody, f.config(alice()), "forbidden"},
		{"no namespace", f.cs, Config{Namespace: "lease-never-created", Duration: testDuration, RenewEvery: testRenew, Identity: alice()}, `namespaces "lease-never-created" not found`},
		{"bad config", f.cs, Config{Namespace: f.ns, Duration: 3 * time.Second, RenewEvery: 2 * time.Second}, "--lease-duration 3s is too short for --lease-renew 2s"},
	} {
		start := time.Now()
		h, err := Acquire(f.ctx, tt.cs, tt.cfg)
		if err == nil {
			h.Release()
			t.Fatalf("%s: Acquire succeeded", tt.name)
		}
		if !strings.Contains(err.Error(), tt.want) || errors.Is(err, ErrHeld) {
			t.Errorf("%s: Acquire = %v, want it to contain %q", tt.name, err, tt.want)
		}
		if d := time.Since(start); d > testDuration/2 {
			t.Errorf("%s: Acquire took %s to fail", tt.name, d)
		}
	}
}

// Holder reads a Lease that another tool wrote without failing.
func TestHolderOfForeignLease(t *testing.T) {
	t.Parallel()
	f := setup(t)
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: f.ns}}
	stealLease(l, "kube-scheduler_abc", 15)
	if _, err := f.cs.CoordinationV1().Leases(f.ns).Create(f.ctx, l, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	id, valid, err := Holder(f.ctx, f.cs, f.ns, "other")
	if err != nil || !valid || id.String() != "kube-scheduler_abc" {
		t.Fatalf("Holder = %v, %v, %v", id, valid, err)
	}
}
