package controller

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func TestIdentity(t *testing.T) {
	for _, tc := range []struct {
		sa, wantSA, wantUser string
	}{
		{"", DefaultServiceAccount, "system:serviceaccount:upgrades:default"},
		{"upgrader", "upgrader", "system:serviceaccount:upgrades:upgrader"},
	} {
		p := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "web-2", Namespace: "upgrades"}}
		p.Spec.ServiceAccountName = tc.sa
		if got := serviceAccountOf(p); got != tc.wantSA {
			t.Errorf("serviceAccountName %q: ServiceAccount %q, want %q", tc.sa, got, tc.wantSA)
		}
		if got := userOf(p); got != tc.wantUser {
			t.Errorf("serviceAccountName %q: user %q, want %q", tc.sa, got, tc.wantUser)
		}
	}
	if DefaultServiceAccount != "default" {
		t.Errorf("DefaultServiceAccount %q", DefaultServiceAccount)
	}
}

// planConfig impersonates the plan's ServiceAccount by user name only (the
// API server adds its groups), keeps the rest of the base config, and
// leaves the base alone.
func TestPlanConfig(t *testing.T) {
	base := &rest.Config{
		Host:        "https://10.0.0.1:6443",
		BearerToken: "controller-token",
		QPS:         50,
		Impersonate: rest.ImpersonationConfig{UserName: "someone", UID: "42", Groups: []string{"system:masters"}, Extra: map[string][]string{"scopes": {"all"}}},
	}
	saved := rest.CopyConfig(base)
	p := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "web-2", Namespace: "upgrades"}}
	p.Spec.ServiceAccountName = "upgrader"

	c := planConfig(base, p)
	if want := (rest.ImpersonationConfig{UserName: "system:serviceaccount:upgrades:upgrader"}); !reflect.DeepEqual(c.Impersonate, want) {
		t.Errorf("impersonation %+v, want %+v", c.Impersonate, want)
	}
	if c.Host != base.Host || c.BearerToken != base.BearerToken || c.QPS != base.QPS {
		t.Errorf("the rest of the config changed: %+v", c)
	}
	if !reflect.DeepEqual(base, saved) {
		t.Errorf("the base config changed: %+v", base)
	}
	if c == base {
		t.Error("the base config itself came back")
	}
}
