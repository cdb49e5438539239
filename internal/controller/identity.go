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

// userOf is the plan's ServiceAccount's user name, as the API server
// knows it.
func userOf(p *v1alpha1.UpgradePlan) string {
	return serviceAccountUser(p.Namespace, p.Spec.ServiceAccountName)
}

// serviceAccountUser is the user name of the ServiceAccount a resource of
// namespace acts as (sa; empty: DefaultServiceAccount): an UpgradePlan's,
// a PlatformUpgrade's.
func serviceAccountUser(namespace, sa string) string {
	if sa == "" {
		sa = DefaultServiceAccount
	}
	return "system:serviceaccount:" + namespace + ":" + sa
}

// planConfig impersonates the plan's ServiceAccount.
func planConfig(base *rest.Config, p *v1alpha1.UpgradePlan) *rest.Config {
	return impersonating(base, userOf(p))
}

// impersonating acts as user. Only the user name is set: the API server
// adds a ServiceAccount's groups itself, so the controller needs
// `impersonate` on serviceaccounts and nothing on groups.
func impersonating(base *rest.Config, user string) *rest.Config {
	c := rest.CopyConfig(base)
	c.Impersonate = rest.ImpersonationConfig{UserName: user}
	return c
}
