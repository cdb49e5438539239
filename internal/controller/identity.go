package controller

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
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

// ownerOf is the owner recorded in the runs a plan starts. The UID is
// not compared (engine.OwnedBy): a plan re-created under its name in its
// namespace goes on with its run.
func ownerOf(key types.NamespacedName) *v1alpha1.RunOwner {
	return &v1alpha1.RunOwner{Kind: v1alpha1.PlanKind, Namespace: key.Namespace, Name: key.Name}
}

// planOwner is ownerOf with the plan's UID, for the runs it starts.
func planOwner(p *v1alpha1.UpgradePlan) *v1alpha1.RunOwner {
	o := ownerOf(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
	o.UID = p.UID
	return o
}

// approverOf is who an approval made through a plan's annotation is
// recorded as approved by: the plan it came from, never the controller
// process (whoever may annotate the plan may approve its run).
func approverOf(kind, namespace, name string) string {
	return fmt.Sprintf("%s %s/%s (annotation %s)", kind, namespace, name, v1alpha1.AnnotationApprove)
}
