package controller

import (
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// DefaultServiceAccount is whom a plan without spec.serviceAccountName
// acts as: its namespace's default ServiceAccount, which has no rights
// unless given some. A plan never borrows the controller's own rights.
const DefaultServiceAccount = "default"

// serviceAccountOf names the ServiceAccount a plan acts as.
func serviceAccountOf(p *v1alpha1.UpgradePlan) string {
	if p.Spec.ServiceAccountName != "" {
		return p.Spec.ServiceAccountName
	}
	return DefaultServiceAccount
}

// userOf is the ServiceAccount's user name, as the API server knows it.
func userOf(p *v1alpha1.UpgradePlan) string {
	return "system:serviceaccount:" + p.Namespace + ":" + serviceAccountOf(p)
}

// planConfig impersonates the plan's ServiceAccount. Only the user name
// is set: the API server adds the ServiceAccount's groups itself, so the
// controller needs `impersonate` on serviceaccounts and nothing on groups.
func planConfig(base *rest.Config, p *v1alpha1.UpgradePlan) *rest.Config {
	c := rest.CopyConfig(base)
	c.Impersonate = rest.ImpersonationConfig{UserName: userOf(p)}
	return c
}
