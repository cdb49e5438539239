package apps

import (
	"sync"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/backup"
)

// Tenants are the clients rollouts act with, one set per namespace and
// ServiceAccount, made once and reused (a client set up per reconcile
// would cost its discovery each time).
type Tenants struct {
	configFor func(namespace, serviceAccount string) *rest.Config
	mu        sync.Mutex
	byAccount map[[2]string]tenant
}

// NewTenants makes rollouts act with configFor(namespace, sa): the
// controller's config impersonating the ServiceAccount (sa "" being the
// namespace's default).
func NewTenants(configFor func(namespace, serviceAccount string) *rest.Config) *Tenants {
	return &Tenants{configFor: configFor, byAccount: map[[2]string]tenant{}}
}

// of is the clients of app's ServiceAccount.
func (ts *Tenants) of(app *v1alpha1.AppRollout) (tenant, error) {
	key := [2]string{app.Namespace, app.Spec.ServiceAccountName}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t, ok := ts.byAccount[key]; ok {
		return t, nil
	}
	cfg := ts.configFor(key[0], key[1])
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return tenant{}, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return tenant{}, err
	}
	bc, err := backup.New(cfg, app.Namespace)
	if err != nil {
		return tenant{}, err
	}
	bc.NamespaceReady() // the rollout's own namespace: it exists
	t := tenant{kube: cs, dyn: dyn, backups: bc}
	ts.byAccount[key] = t
	return t, nil
}
