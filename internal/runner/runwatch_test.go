package runner

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/resolve"
	"github.com/upshift-dev/upshift/internal/step"
)

// A drive hears an abort request written into its run by another
// process: through a watch of the run, reading it never, and by reading
// it on every tick when its user may not watch runs.
func TestDriveHearsAnAbortRequest(t *testing.T) {
	f := newFixture(t)
	if err := f.s.ready(f.ctx); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		verbs []string
		polls bool
	}{
		{"watching", []string{"get", "list", "watch"}, false},
		{"may not watch", []string{"get", "list"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			name := "abort-" + strings.ReplaceAll(tt.name, " ", "-")
			_, run := savedRun(t, f, name)
			cfg := runsUser(t, f, "runs-"+name, tt.verbs)
			gets := countRunReads(cfg, name)
			s, err := Open(cfg, Options{Namespace: f.runsNS, LeaseRenew: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(f.ctx)
			defer cancel()
			heard := make(chan struct{})
			go s.watchAbort(ctx, name, func() { close(heard) })

			time.Sleep(500 * time.Millisecond) // the run as it is: no request
			select {
			case <-heard:
				t.Fatal("an abort was heard before anybody asked for one")
			default:
			}
			run.Status.AbortRequested = true
			if err := f.s.store.Save(f.ctx, run); err != nil {
				t.Fatal(err)
			}
			select {
			case <-heard:
			case <-time.After(10 * time.Second):
				t.Fatal("the abort request was not heard within 10 s")
			}
			if n := gets.Load(); tt.polls != (n > 0) {
				t.Errorf("the run was read %d times; polling: %v", n, tt.polls)
			}
		})
	}
}

// savedRun saves a started run of a plan named name, as a drive would
// have, and returns the plan and the run.
func savedRun(t *testing.T, f *fixture, name string) (*resolve.Plan, *v1alpha1.UpgradeRun) {
	t.Helper()
	p := f.plan(name, "1", "")
	run := engine.NewRun(p.Plan, p.Digest, p.SourceDigests, time.Now())
	if err := f.s.store.Create(f.ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := f.s.store.Save(f.ctx, run); err != nil {
		t.Fatal(err)
	}
	return p, run
}

// countRunReads counts cfg's GETs of the run named name.
func countRunReads(cfg *rest.Config, name string) *atomic.Int64 {
	var gets atomic.Int64
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/upgraderuns/"+name) {
				gets.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	return &gets
}

// runsUser is a user who may do verbs on the runs of f's runs namespace,
// once the authorizer knows it.
func runsUser(t *testing.T, f *fixture, user string, verbs []string) *rest.Config {
	t.Helper()
	rule := rbacv1.PolicyRule{APIGroups: []string{"upshift.dev"}, Resources: []string{"upgraderuns", "upgraderuns/status"}, Verbs: verbs}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: f.runsNS}, Rules: []rbacv1.PolicyRule{rule}}
	if _, err := f.cs.RbacV1().Roles(f.runsNS).Create(f.ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: f.runsNS},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: user},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}}}
	if _, err := f.cs.RbacV1().RoleBindings(f.runsNS).Create(f.ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg, err := testenv.Cluster(t).UserRESTConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	probe, err := Open(cfg, Options{Namespace: f.runsNS})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := probe.store.GetResource(f.ctx, "none"); !apierrors.IsForbidden(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("user %s still may not list runs", user)
		}
	}
	return cfg
}

// A drive waiting at an approval hears it on the watch of its run, at
// once and without reading the run; a user who may not watch runs is
// told to read instead (step.ErrCannotAwait).
func TestApprovalIsHeardOnTheRunsWatch(t *testing.T) {
	f := newFixture(t)
	if err := f.s.ready(f.ctx); err != nil {
		t.Fatal(err)
	}
	p, run := savedRun(t, f, "approved")
	cfg := runsUser(t, f, "approver-watching", []string{"get", "list", "watch"})
	gets := countRunReads(cfg, "approved")
	s, err := Open(cfg, Options{Namespace: f.runsNS, LeaseRenew: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	a := s.newActor(p, s.deps)
	got := make(chan error, 1)
	go func() {
		ap, err := a.awaitApproval(f.ctx, "settings")
		if err == nil && (ap == nil || ap.By != "ops@host") {
			err = fmt.Errorf("approval %+v", ap)
		}
		got <- err
	}()
	time.Sleep(500 * time.Millisecond)
	run.Status.Approvals = append(run.Status.Approvals, v1alpha1.Approval{Step: "settings", By: "ops@host", At: metav1.NewMicroTime(time.Now())})
	if err := f.s.store.Save(f.ctx, run); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the approval was not heard within 10 s")
	}
	if n := gets.Load(); n != 0 {
		t.Errorf("awaiting the approval read the run %d times; want none (the watch tells)", n)
	}

	cannot, err := Open(runsUser(t, f, "approver-not-watching", []string{"get", "list"}), Options{Namespace: f.runsNS})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cannot.newActor(p, cannot.deps).awaitApproval(f.ctx, "settings"); !errors.Is(err, step.ErrCannotAwait) {
		t.Errorf("awaitApproval by a user who may not watch runs = %v; want step.ErrCannotAwait", err)
	}
}
